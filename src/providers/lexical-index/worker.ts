/**
 * The lexical index's worker thread: everything whose cost grows with the corpus (analysis of written
 * documents, segment builds, merges, segment reads and writes) runs here, never on the main thread. It
 * keeps no state between requests (the index folder is named in each one), so the process's two threads of it
 * (small writes; merges and large builds: worker-client.ts) serve every index. Requests run concurrently: a long
 * merge pauses now and then so that a request arriving meanwhile is not held up behind it (a segment build does not).
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parentPort } from 'node:worker_threads'
import { ANALYZERS } from '../../kernel/analyzers.js'
import { readDocumentTerms, readSegment, writeSegment } from './segment-file.js'
import { buildSegment, contentHash, mergeSegments, packSegment, segmentBuffers, type AnalysedDocument, type SegmentData } from './segment.js'
import type { Manifest, WorkerRequest, WorkerResponse } from './worker-protocol.js'

const MANIFEST = 'manifest.json'
const segmentPath = (dir: string, name: string) => join(dir, `${name}.seg`)
const pause = () => new Promise<void>((resolve) => setImmediate(resolve))

async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const temp = join(dir, `${MANIFEST}.tmp`)
  await writeFile(temp, JSON.stringify(manifest))
  // The index is derived from the vector store and checked against it at start, so a rename is enough:
  // after a crash the manifest is the old one or the new one, and whatever it names was written before it.
  await rename(temp, join(dir, MANIFEST))
}

/** Removes an unusable index's files; the caller rebuilds it from the source of truth. */
async function clear(dir: string): Promise<void> {
  for (const f of await readdir(dir).catch(() => [])) {
    if (f.endsWith('.seg') || f.startsWith(MANIFEST)) await rm(join(dir, f), { force: true })
  }
}

interface Outcome {
  result: unknown
  transfer?: ArrayBuffer[]
}
type Handler = (args: never) => Promise<Outcome>

const handlers: Record<WorkerRequest['op'], Handler> = {
  async load({ dir, analyzer }: Extract<WorkerRequest, { op: 'load' }>['args']) {
    let manifest: Manifest
    try {
      manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
      if (!missing) await clear(dir)
      return { result: { manifest: null, segments: [], deletedTerms: [] } }
    }
    if (manifest.format !== 1 || manifest.analyzer !== analyzer) {
      await clear(dir)
      return { result: { manifest: null, segments: [], deletedTerms: [] } }
    }
    const segments: SegmentData[] = []
    // per segment, the term ids of the documents its tombstones remove
    const deletedTerms: Uint32Array[] = []
    try {
      for (const s of manifest.segments) {
        const path = segmentPath(dir, s.name)
        segments.push(packSegment((await readSegment(path, false)).data))
        deletedTerms.push(s.deleted.length > 0 ? await readDocumentTerms(path, s.deleted) : new Uint32Array(0))
      }
    } catch {
      await clear(dir)
      return { result: { manifest: null, segments: [], deletedTerms: [] } }
    }
    // files of writes or merges that never committed
    const named = new Set(manifest.segments.map((s) => `${s.name}.seg`))
    for (const f of await readdir(dir)) {
      if ((f.endsWith('.seg') && !named.has(f)) || f.endsWith('.tmp')) await rm(join(dir, f), { force: true })
    }
    return {
      result: { manifest, segments, deletedTerms },
      transfer: [...segments.flatMap(segmentBuffers), ...deletedTerms.map((t) => t.buffer as ArrayBuffer)]
    }
  },

  async write({ dir, manifest, build, deletions }: Extract<WorkerRequest, { op: 'write' }>['args']) {
    await mkdir(dir, { recursive: true })
    let segment: SegmentData | undefined
    let written: string | undefined
    try {
      if (build) {
        const analyzer = ANALYZERS[build.analyzer]
        const docs: AnalysedDocument[] = []
        for (let i = 0; i < build.docs.length; i++) {
          const { id, text } = build.docs[i]!
          docs.push({ id, hash: contentHash(text), tokens: analyzer(text) })
          if ((i & 0xff) === 0xff) await pause()
        }
        const built = buildSegment(build.name, docs)
        written = segmentPath(dir, build.name)
        await writeSegment(written, built.data, built.forward)
        segment = packSegment(built.data)
      }
      const deletedTerms: Uint32Array[] = []
      for (const d of deletions) deletedTerms.push(await readDocumentTerms(segmentPath(dir, d.segment), d.ordinals))
      await writeManifest(dir, manifest)
      return {
        result: { segment, deletedTerms },
        transfer: [...(segment ? segmentBuffers(segment) : []), ...deletedTerms.map((t) => t.buffer as ArrayBuffer)]
      }
    } catch (error) {
      if (written) await rm(written, { force: true }).catch(() => undefined)
      throw error
    }
  },

  async merge({ dir, name, inputs }: Extract<WorkerRequest, { op: 'merge' }>['args']) {
    const read = []
    for (const input of inputs) read.push({ ...(await readSegment(segmentPath(dir, input.segment), true)), deleted: input.deleted })
    const merged = await mergeSegments(name, read, pause)
    await writeSegment(segmentPath(dir, name), merged.data, merged.forward)
    const segment = packSegment(merged.data)
    return {
      result: { segment, maps: merged.maps },
      transfer: [...segmentBuffers(segment), ...merged.maps.map((m) => m.buffer as ArrayBuffer)]
    }
  },

  async terms({ dir, segment, ordinals }: Extract<WorkerRequest, { op: 'terms' }>['args']) {
    const terms = await readDocumentTerms(segmentPath(dir, segment), ordinals)
    return { result: terms, transfer: [terms.buffer as ArrayBuffer] }
  },

  async commit({ dir, manifest, drop }: Extract<WorkerRequest, { op: 'commit' }>['args']) {
    await writeManifest(dir, manifest)
    for (const name of drop) await rm(segmentPath(dir, name), { force: true })
    return { result: null }
  }
}

const port = parentPort
if (!port) throw new Error('worker.ts runs as a worker thread')
port.on('message', (request: WorkerRequest) => {
  const handler = handlers[request.op] as (args: unknown) => ReturnType<Handler>
  handler(request.args).then(
    ({ result, transfer }: Outcome) => port.postMessage({ id: request.id, ok: true, result } satisfies WorkerResponse, transfer ?? []),
    (error: unknown) => port.postMessage({
      id: request.id, ok: false, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    } satisfies WorkerResponse)
  )
})
