import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { modelFileOf, sessionOptionsOf, type OnnxSessionOptions } from './onnx-session.js'

/** The files of one shared-weights copy, in its own folder. */
const GRAPH = 'model.onnx'
const WEIGHTS = 'model.data'
/** The sha256 of the graph and the data file as written, checked before each reuse. */
const DIGEST = 'sha256'

/**
 * Writes, once, the copy of the folder's model that several sessions can run from one set of weights, and returns
 * its graph file. ONNX Runtime optimises the graph as every session would and writes its constant weights, the
 * packed ones included (`session.save_external_prepacked_constant_initializers`), to one data file beside it; a
 * session loading that graph maps the data file instead of packing its own copy, so every session of the process
 * (and of any process on the same file) reads the same pages, and two sessions running at once share one copy in
 * the processor's cache instead of evicting each other's (bench/results/concurrency.log.md, "One copy of the
 * weights"). The copy is made by the running ONNX Runtime for this processor, so it is kept under a name made of
 * the source model's bytes, the runtime's version, the session options and this processor's model, and never
 * moved to another machine. A copy whose files no longer have the digest they were written with is made again.
 */
export async function sharedWeightsModel(options: OnnxSessionOptions, cacheDir: string): Promise<string> {
  const ort = await import('onnxruntime-node')
  const source = modelFileOf(options.folder)
  const key = createHash('sha256')
    .update(await readFile(source))
    .update(JSON.stringify({ ort: ort.env.versions.common, session: sessionOptionsOf(options), cpu: await processorModel() }))
    .digest('hex')
    .slice(0, 16)
  const folder = join(cacheDir, key)
  const graph = join(folder, GRAPH)
  if (await exists(graph)) {
    const recorded = await readFile(join(folder, DIGEST), 'utf8').catch(() => '')
    if (recorded === (await digestOf(folder))) return graph
    await rm(folder, { recursive: true, force: true })
  }
  // Written beside, then renamed: a reader never sees a half-written copy, and of two processes starting together
  // the first rename wins and the other's copy (the same bytes) is dropped.
  const making = `${folder}.${process.pid}.${Date.now()}`
  await mkdir(making, { recursive: true })
  try {
    const base = sessionOptionsOf(options)
    const extra = (base.extra ?? {}) as { session?: Record<string, unknown> }
    const session = await ort.InferenceSession.create(source, {
      ...base,
      // ONNX Runtime warns that a graph optimised this far may hold this processor's optimisations: the copy's key
      // holds the processor's model and flags, so the warning (on stderr at every first start) says nothing new.
      logSeverityLevel: 3,
      optimizedModelFilePath: join(making, GRAPH),
      extra: {
        ...extra,
        session: {
          ...extra.session,
          optimized_model_external_initializers_file_name: WEIGHTS,
          // Weights of 1 KB or more go to the shared file; the few smaller ones stay in each session's graph.
          optimized_model_external_initializers_min_size_in_bytes: '1024',
          save_external_prepacked_constant_initializers: '1'
        }
      }
    })
    await session.release()
    await writeFile(join(making, DIGEST), await digestOf(making))
    await rename(making, folder).catch(async (error: unknown) => {
      if (!(await exists(graph))) throw error
    })
  } finally {
    await rm(making, { recursive: true, force: true })
  }
  return graph
}

async function digestOf(folder: string): Promise<string> {
  const hash = createHash('sha256')
  for (const file of [GRAPH, WEIGHTS]) hash.update(await readFile(join(folder, file)))
  return hash.digest('hex')
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false)
}

/** The processor's model name and flags from /proc/cpuinfo (an optimised graph may use what this processor has). */
async function processorModel(): Promise<string> {
  const info = await readFile('/proc/cpuinfo', 'utf8').catch(() => '')
  const field = (name: string): string => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(info)?.[1] ?? ''
  return `${field('model name')}|${field('flags')}`
}
