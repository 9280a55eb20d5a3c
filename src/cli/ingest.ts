import { parseArgs } from 'node:util'
import { loadConfig } from '../config.js'
import { checkedDocuments } from '../corpus/documents-body.js'
import type { DocumentInput } from '../corpus/documents.js'
import { readFile } from 'node:fs/promises'
import { readDocuments } from '../corpus/files.js'
import { readGraphFile, type GraphIngestBody } from '../corpus/graph.js'
import { DEFAULT_NAMESPACE, isNamespace, NAMESPACE_PATTERN } from '../providers/namespace.js'
import { openServices, type Services } from '../services.js'
import { ProgressBar } from './progress.js'
import { createRecallClient, RecallError, type IngestEpisodesBody, type IngestGraphBody, type RecallClient } from '../../clients/typescript/index.js'

const USAGE = `usage: npm run ingest -- [--url URL | --direct] [--namespace NS] PATH...

Ingests .md/.markdown/.txt files, or folders of them, into the hybrid corpus, and .json/.jsonl files
into the knowledge graph ({entities, relations}, or one {"entity": …} / {"relation": …} per line), or,
when the JSON holds "episodes", into the episodic memory (the POST /ingest/episodes body).
  --url URL        the running service (default RECALL_URL, else http://127.0.0.1:$PORT, PORT default 3000)
  --direct         open the configured stores in this process instead (the service must not be running on
                   the same DATA_DIR)
  --namespace NS   the namespace written to (default "default"; ${NAMESPACE_PATTERN})`

/** Requests stay well under the default 10 MiB body limit. */
const MAX_BATCH_BYTES = 2 * 1024 * 1024
const MAX_BATCH_DOCS = 100

function batches(docs: DocumentInput[]): DocumentInput[][] {
  const out: DocumentInput[][] = []
  let current: DocumentInput[] = []
  let bytes = 0
  for (const d of docs) {
    const size = Buffer.byteLength(JSON.stringify(d))
    if (current.length > 0 && (bytes + size > MAX_BATCH_BYTES || current.length >= MAX_BATCH_DOCS)) {
      out.push(current)
      current = []
      bytes = 0
    }
    current.push(d)
    bytes += size
  }
  if (current.length > 0) out.push(current)
  return out
}

/** The typed client (clients/typescript) of the service at `url`, with `RECALL_API_KEY` as its key. */
function clientFor(url: string): RecallClient {
  const apiKey = process.env.RECALL_API_KEY
  return createRecallClient({ baseUrl: url, ...(apiKey ? { apiKey } : {}) })
}

/** A call over HTTP; a service that cannot be reached gets the hint to start it. */
async function overClient<T>(url: string, call: () => Promise<T>, what = ''): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof RecallError) throw new Error(`${error.message}${what}`)
    throw new Error(`cannot reach recall at ${url} (${(error as Error).message}); start it with \`make run\`, or use --direct`)
  }
}

async function overHttp(url: string, namespace: string, docs: DocumentInput[], bar: ProgressBar) {
  const client = clientFor(url)
  let chunks = 0
  let replaced = 0
  let unchanged = 0
  let generation: number | undefined
  for (const batch of batches(docs)) {
    const body = await overClient(url, () => client.ingestDocuments({ documents: batch, namespace }), ` (batch starting at "${batch[0]!.id}")`)
    chunks += body.chunks
    replaced += body.replaced
    unchanged += body.unchanged
    generation = body.generation ?? generation
    bar.advance(batch.length, `${chunks} chunks`)
  }
  return { chunks, replaced, unchanged, generation }
}

/** In --direct mode, the configured stores opened in this process: once, at first use; main() closes them. */
type DirectServices = () => Promise<Services>

async function direct(stores: DirectServices, namespace: string, docs: DocumentInput[], bar: ProgressBar) {
  const services = await stores()
  let chunks = 0
  let replaced = 0
  let unchanged = 0
  let generation: number | undefined
  for (const batch of batches(docs)) {
    const summary = await services.corpus.write(namespace, { kind: 'documents', op: 'upsert', documents: batch })
    chunks += summary.chunks
    replaced += summary.replaced
    unchanged += summary.unchanged
    generation = summary.generation ?? generation
    bar.advance(batch.length, `${chunks} chunks`)
  }
  return { chunks, replaced, unchanged, generation }
}

const isGraphFile = (p: string) => /\.(json|jsonl|ndjson)$/i.test(p)

async function ingestGraphFiles(files: string[], namespace: string, direct: DirectServices | undefined, url: string): Promise<void> {
  for (const file of files) {
    if (file.toLowerCase().endsWith('.json')) {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
      if (Array.isArray(parsed.episodes)) {
        await ingestEpisodeFile(file, namespace, parsed, direct, url)
        continue
      }
    }
    const body: GraphIngestBody = await readGraphFile(file)
    let result: { entities: number; relations: number }
    if (direct) {
      const services = await direct()
      result = await services.corpus.write(namespace, { kind: 'graph', op: 'upsert', body })
    } else {
      result = await overClient(url, () => clientFor(url).ingestGraph({ ...body, namespace } as IngestGraphBody))
    }
    console.log(`${file}: ${result.entities} entities, ${result.relations} relations`)
  }
}

async function ingestEpisodeFile(file: string, namespace: string, body: Record<string, unknown>, direct: DirectServices | undefined, url: string): Promise<void> {
  let result: Record<string, unknown>
  if (direct) {
    const services = await direct()
    result = { ...await services.corpus.write(namespace, { kind: 'episodes', op: 'upsert', body }) }
  } else {
    result = { ...await overClient(url, () => clientFor(url).ingestEpisodes({ ...body, namespace } as IngestEpisodesBody)) }
  }
  console.log(`${file}: ${result.episodes} episodes, ${result.facets} facets, ${result.points} points, ${result.entities} entities`)
  const warnings = (result.warnings ?? []) as Array<{ field: string; message: string }>
  for (const w of warnings.slice(0, 10)) console.log(`  warning: ${w.field}: ${w.message}`)
  if (Number(result.warnings_total ?? 0) > 10) console.log(`  … ${Number(result.warnings_total) - 10} more warnings`)
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      url: { type: 'string' }, direct: { type: 'boolean', default: false }, namespace: { type: 'string', default: DEFAULT_NAMESPACE },
      help: { type: 'boolean', short: 'h' }
    },
    allowPositionals: true
  })
  if (values.help || positionals.length === 0) {
    console.error(USAGE)
    process.exit(values.help ? 0 : 2)
  }
  const namespace = values.namespace!
  if (!isNamespace(namespace)) throw new Error(`--namespace ${JSON.stringify(namespace)} does not match ${NAMESPACE_PATTERN}`)
  const started = performance.now()
  const url = values.url ?? process.env.RECALL_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`
  const graphFiles = positionals.filter(isGraphFile)
  const textPaths = positionals.filter((p) => !isGraphFile(p))
  // --direct: one set of stores (model load, lexical rebuild, …) for every file, opened when first needed
  let opened: Promise<Services> | undefined
  // A start-up step that cannot succeed (another process is the stores' only writer, other lexical settings) stops it here
  const onFatal = (step: string, error: Error): never => {
    console.error(`ingest failed: ${step}: ${error.message}`)
    process.exit(1)
  }
  const stores: DirectServices | undefined = values.direct ? () => (opened ??= openServices(loadConfig(), { onFatal })) : undefined
  try {
    if (graphFiles.length > 0) await ingestGraphFiles(graphFiles, namespace, stores, url)
    if (textPaths.length === 0) return
    const docs = await readDocuments(textPaths)
    if (docs.length === 0) throw new Error(`no .md, .markdown or .txt files under ${textPaths.join(', ')}`)
    // Every batch is checked as POST /ingest/documents checks it before the first is written.
    for (const batch of batches(docs)) checkedDocuments({ documents: batch, namespace })
    const bar = new ProgressBar(docs.length, 'documents')
    const { chunks, replaced, unchanged, generation } = stores ? await direct(stores, namespace, docs, bar) : await overHttp(url, namespace, docs, bar)
    bar.done()
    const seconds = (performance.now() - started) / 1000
    console.log(`ingested ${docs.length} documents (${replaced} replaced, ${unchanged} unchanged), ${chunks} chunks in ${seconds.toFixed(1)} s ` +
      `(${(chunks / seconds).toFixed(1)} chunks/s)${values.direct ? '' : ` into ${url}`}, namespace ${namespace}` +
      // a reader passes it as `min_generation` to see these documents on any replica
      (generation !== undefined ? `, generation ${generation}` : ''))
  } finally {
    // a failed open has already surfaced as the error being thrown
    await (await opened?.catch(() => undefined))?.close()
  }
}

main().catch((error: unknown) => {
  console.error(`ingest failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
