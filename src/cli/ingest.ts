import { MAX_PAGE_LIMIT } from '../schemas/paging.js'
import { readFile, stat } from 'node:fs/promises'
import { relative } from 'node:path'
import { parseArgs } from 'node:util'
import { DocumentIngestError } from '../corpus/documents-body.js'
import { chunkDocument, NO_TEXT_REASON, type DocumentInput } from '../corpus/documents.js'
import { EpisodeIngestError } from '../corpus/episodes.js'
import { ConversationIngestError, type ConversationsBody } from '../corpus/conversations/body.js'
import { conversationsOfChatFile } from '../corpus/conversations/chat-files.js'
import { documentFingerprint } from '../corpus/fingerprint.js'
import { findDocumentFiles, readDocumentFile, type FileDocument } from '../corpus/files.js'
import { GraphIngestError, readGraphFile, type GraphIngestBody } from '../corpus/graph.js'
import { DEFAULT_NAMESPACE, isNamespace, NAMESPACE_PATTERN } from '../providers/namespace.js'
import type { Runtime } from '../runtime.js'
import { addDerived, type IngestJobView } from '../corpus/ingest-jobs.js'
import type { DerivedReport } from '../corpus/write-path.js'
import { MAX_FINGERPRINTS_PER_REQUEST } from '../schemas/ingest.js'
import { EXIT_INTERRUPTED, EXIT_REFUSED, interruptedLines, reportLines, runReport, type FileReport } from './ingest-report.js'
import { duration, StatusLine } from './progress.js'
import { createRecallClient, RecallError, type IngestEpisodesBody, type IngestGraphBody, type RecallClient } from '../../clients/typescript/index.js'

const USAGE = `usage: npm run ingest -- [--url URL | --direct] [--namespace NS] [--json] [--resend] PATH...

Ingests documents into the hybrid corpus: Markdown (.md, .markdown), plain text (.txt), HTML (.html, .htm),
PDF (.pdf) and Word (.docx) files, or folders of them (docs/formats.md); text in UTF-8, UTF-16, GB18030/GBK,
Big5 and the other encodings chardet detects. Image files (.png, .jpg, .jpeg, .webp, .tif, .tiff, every page of a
multi-page TIFF) and the pages of a PDF without text are read by OCR in this process (Tesseract, OCR_* settings;
progress per page), and the report names the pages OCR'd, flagged below OCR_MIN_CONFIDENCE, or failed. .json/.jsonl files go into the knowledge graph ({entities,
relations}, or one {"entity": …} / {"relation": …} per line), or, when the JSON holds "episodes", into the
episodic memory (the POST /ingest/episodes body). Chats go into the episodic memory as conversations
(POST /ingest/conversations): LoCoMo JSON, an OpenAI-style {"messages": […]} file, or JSONL of
{conversation, session, speaker, text, time}.
An empty file is skipped, a binary or junk one refused, each with its reason; the others are still written. The
run ends with a report of every file; it exits ${EXIT_REFUSED} when a file was refused, 1 when the run itself failed.
Progress (files, chunks, rate, ETA, the file being written) shows at least once a second. Ctrl-C stops after the
batch being written (each file is then wholly written or not at all), says what was written, and exits ${EXIT_INTERRUPTED};
running the same command again resumes: the files already written are skipped as unchanged.
The service is asked first which files it holds unchanged (by fingerprint): their bodies are not sent.
  --url URL        the running service (default RECALL_URL, else http://127.0.0.1:$PORT, PORT default 3000)
  --direct         open the configured stores in this process instead (the service must not be running on
                   the same DATA_DIR)
  --namespace NS   the namespace written to (default "default"; ${NAMESPACE_PATTERN})
  --json           print the report as one JSON object on stdout
  --resend         send every file, also those the service holds unchanged (they are still not embedded or
                   written; with derivation on they are derived again: docs/derivation.md)`

/** Requests stay well under the default 10 MiB body limit. */
const MAX_BATCH_BYTES = 2 * 1024 * 1024
const MAX_BATCH_DOCS = 100

/** A document read from a file, and the file's line of the report. */
interface Pending { document: DocumentInput; report: FileReport }

function batches(pending: Pending[]): Pending[][] {
  const out: Pending[][] = []
  let current: Pending[] = []
  let bytes = 0
  for (const p of pending) {
    const size = Buffer.byteLength(JSON.stringify(p.document))
    if (current.length > 0 && (bytes + size > MAX_BATCH_BYTES || current.length >= MAX_BATCH_DOCS)) {
      out.push(current)
      current = []
      bytes = 0
    }
    current.push(p)
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
    if (error instanceof RecallError) {
      if (error.status === 400 || error.status === 413) throw new Refusal(error.body?.message ?? error.message)
      throw new Error(`${error.message}${what}`)
    }
    throw new Error(`cannot reach recall at ${url} (${(error as Error).message}); start it with \`make run\`, or use --direct`)
  }
}

/** A documents write running as a job. */
interface RunningIngest {
  read(): Promise<IngestJobView>
  /** Asks it to stop after its batch in flight; the job as it is then. */
  cancel(): Promise<IngestJobView>
}

/** A body the service or the stores refused: that file's (or batch's) fault, not the run's. */
class Refusal extends Error {}

const isRefusal = (error: unknown): error is Error =>
  error instanceof Refusal || error instanceof DocumentIngestError || error instanceof GraphIngestError || error instanceof EpisodeIngestError ||
  error instanceof ConversationIngestError

/** What the namespace holds of a document: any version of it, and whether it is held unchanged (its chunks then). */
interface Held { held: boolean; unchanged: boolean; chunks?: number }

/** Where documents, graphs and Episodes are written: the service over HTTP, or the stores in this process. */
interface Target {
  name: string
  /**
   * What the namespace holds of these documents, by id (`POST /documents/unchanged`); from a service older than that
   * route, only which ids it holds (every document is then sent); undefined when it cannot say even that.
   */
  held(namespace: string, documents: ReadonlyArray<{ id: string; fingerprint: string }>): Promise<{ held: Map<string, Held>; generation?: number } | undefined>
  /** Starts writing documents as a job (over HTTP `wait=false`; --direct in this process): the job, to poll and cancel. */
  documents(namespace: string, documents: DocumentInput[]): Promise<RunningIngest>
  graph(namespace: string, body: GraphIngestBody): Promise<{ entities: number; relations: number }>
  episodes(namespace: string, body: Record<string, unknown>): Promise<Record<string, unknown>>
  conversations(namespace: string, body: { conversations: ConversationsBody['conversations'] }): Promise<Record<string, unknown>>
}

/**
 * Every document id of a namespace, page by page (`next_cursor`); undefined when the service does not answer. The
 * first request names no `limit` or `cursor`, so a service older than paging answers it whole and sends no cursor.
 */
async function listedDocuments(client: ReturnType<typeof clientFor>, namespace: string): Promise<string[] | undefined> {
  const ids: string[] = []
  let cursor: string | undefined
  do {
    const query = cursor === undefined ? { namespace } : { namespace, cursor, limit: MAX_PAGE_LIMIT }
    const listed = await client.raw.GET('/documents', { params: { query } }).catch(() => undefined)
    if (!listed?.data) return undefined
    ids.push(...listed.data.documents.map((d) => d.id))
    cursor = listed.data.next_cursor
  } while (cursor !== undefined)
  return ids
}

function httpTarget(url: string): Target {
  const client = clientFor(url)
  return {
    name: url,
    async held(namespace, documents) {
      const held = new Map<string, Held>()
      let generation: number | undefined
      for (let from = 0; from < documents.length; from += MAX_FINGERPRINTS_PER_REQUEST) {
        const body = { namespace, documents: documents.slice(from, from + MAX_FINGERPRINTS_PER_REQUEST).map(({ id, fingerprint }) => ({ id, fingerprint })) }
        const answer = await client.raw.POST('/documents/unchanged', { body }).catch(() => undefined)
        if (!answer?.data) {
          // a service older than the route: only to tell ingested from replaced in the report (it still takes the write)
          const listed = await listedDocuments(client, namespace)
          return listed ? { held: new Map(listed.map((id) => [id, { held: true, unchanged: false }])) } : undefined
        }
        for (const d of answer.data.documents) held.set(d.id, d)
        generation = answer.data.generation ?? generation
      }
      return { held, ...(generation !== undefined ? { generation } : {}) }
    },
    async documents(namespace, documents) {
      const what = ` (batch starting at "${documents[0]!.id}")`
      // each invalid document is answered on its own (the CLI checked each already: a refusal here is the service's rule)
      const { id } = await overClient(url, () => client.startIngestJob({ documents, namespace, on_invalid: 'skip' }), what)
      return {
        read: () => overClient(url, () => client.ingestJob(id), what) as Promise<IngestJobView>,
        cancel: () => overClient(url, () => client.cancelIngestJob(id), what) as Promise<IngestJobView>
      }
    },
    graph: (namespace, body) => overClient(url, () => client.ingestGraph({ ...body, namespace } as IngestGraphBody)),
    episodes: async (namespace, body) => ({ ...await overClient(url, () => client.ingestEpisodes({ ...body, namespace } as IngestEpisodesBody)) }),
    conversations: async (namespace, body) => ({ ...await overClient(url, () => client.ingestConversations({ ...body, namespace })) })
  }
}

/**
 * In --direct mode, the configured stores opened in this process: once, at first use; main() closes them. Documents are
 * written by the runtime's ingest jobs (src/corpus/ingest-jobs.ts), the ones the service runs, through the same write path.
 */
function directTarget(stores: () => Promise<Runtime>): Target {
  return {
    name: 'direct',
    async held(namespace, documents) {
      const { corpus } = await stores()
      const { generation } = await corpus.readState('hybrid', namespace)
      const library = corpus.documents.get(namespace)
      const held = new Map(documents.map(({ id, fingerprint }) => {
        const chunks = library?.heldUnchanged(id, fingerprint)
        return [id, { held: library?.has(id) ?? false, unchanged: chunks !== undefined, ...(chunks !== undefined ? { chunks } : {}) }] as const
      }))
      return { held, ...(generation !== undefined ? { generation } : {}) }
    },
    async documents(namespace, documents) {
      const jobs = (await stores()).ingestJobs
      const { id } = jobs.start(namespace, documents)
      return { read: async () => jobs.get(id)!, cancel: async () => jobs.cancel(id)! }
    },
    graph: async (namespace, body) => (await stores()).corpus.write(namespace, { kind: 'graph', op: 'upsert', body }),
    episodes: async (namespace, body) => ({ ...await (await stores()).corpus.write(namespace, { kind: 'episodes', op: 'upsert', body }) }),
    conversations: async (namespace, body) => ({ ...await (await stores()).corpus.write(namespace, { kind: 'conversations', op: 'upsert', body }) })
  }
}

const isGraphFile = (p: string) => /\.(json|jsonl|ndjson)$/i.test(p)

async function ingestGraphFile(file: string, namespace: string, target: Target): Promise<FileReport> {
  let body: { episodes: Record<string, unknown> } | { graph: GraphIngestBody } | { conversations: ConversationsBody['conversations'] }
  try {
    const text = await readFile(file, 'utf8')
    const chat = conversationsOfChatFile(text, file, (await stat(file)).mtime)
    const parsed = !chat && file.toLowerCase().endsWith('.json') ? JSON.parse(text) as Record<string, unknown> : undefined
    body = chat ? { conversations: chat } : Array.isArray(parsed?.episodes) ? { episodes: parsed! } : { graph: await readGraphFile(file) }
  } catch (error) {
    return { file, outcome: 'refused', reason: `cannot be read: ${(error as Error).message}` }
  }
  try {
    if ('conversations' in body) {
      const result = await target.conversations(namespace, { conversations: body.conversations })
      return { file, outcome: 'ingested', detail: `${result.conversations} conversations, ${result.sessions} sessions, ${result.turns} turns (${result.turns_embedded} embedded)` }
    }
    if ('episodes' in body) return await ingestEpisodeFile(file, namespace, body.episodes, target)
    const result = await target.graph(namespace, body.graph)
    return { file, outcome: 'ingested', detail: `${result.entities} entities, ${result.relations} relations` }
  } catch (error) {
    if (isRefusal(error)) return { file, outcome: 'refused', reason: error.message }
    throw error
  }
}

async function ingestEpisodeFile(file: string, namespace: string, body: Record<string, unknown>, target: Target): Promise<FileReport> {
  const result = await target.episodes(namespace, body)
  const warnings = (result.warnings ?? []) as Array<{ field: string; message: string }>
  const shown = warnings.slice(0, 10).map((w) => `; warning: ${w.field}: ${w.message}`).join('')
  const more = Number(result.warnings_total ?? 0) > 10 ? `; … ${Number(result.warnings_total) - 10} more warnings` : ''
  return {
    file, outcome: 'ingested',
    detail: `${result.episodes} episodes, ${result.facets} facets, ${result.points} points, ${result.entities} entities${shown}${more}`
  }
}

/** Reads every document file; a file's id already taken by an earlier file of this run is refused. */
async function readFiles(paths: string[]): Promise<FileDocument[]> {
  const read: FileDocument[] = []
  const owner = new Map<string, string>()
  const found = await findDocumentFiles(paths)
  // OCR only when a file may need it; its progress, page by page, on the status line
  let ocrProgress: { file?: string; done: number; total: number } | undefined
  const mayNeedOcr = found.some(({ file }) => !/\.(md|markdown|txt|html?|docx)$/i.test(file))
  const openOcr = async () => {
    const [{ openOcrReader }, { loadConfig }] = await Promise.all([import('../corpus/formats/ocr-pages.js'), import('../config.js')])
    return openOcrReader(loadConfig().ocr, (p) => { ocrProgress = p })
  }
  const ocr = mayNeedOcr ? await openOcr() : undefined
  const status = mayNeedOcr && typeof ocr === 'object'
    ? new StatusLine(() => (ocrProgress ? `OCR ${displayPath(ocrProgress.file ?? '')}: page ${ocrProgress.done}/${ocrProgress.total}` : 'reading files'))
    : undefined
  try {
    for (const { file, root } of found) read.push(...await readOne(file, root))
  } finally {
    status?.done()
  }
  return read

  async function readOne(file: string, root: string): Promise<FileDocument[]> {
    const r = await readDocumentFile(file, root, ocr)
    if (r.outcome === 'read') {
      const first = owner.get(r.document.id)
      if (first) return [{ file, source: r.source, outcome: 'refused', reason: `id "${r.document.id}" is already the id of ${first}` }]
      owner.set(r.document.id, displayPath(file))
    }
    return [r]
  }
}

/** A path below the working folder as relative, any other as absolute. */
function displayPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel === '' || rel.startsWith('..') ? file : rel
}

/** What a Ctrl-C stopped: the files written (or found unchanged), those of the batch in flight, the others. */
interface Interruption {
  written: string[]
  inFlight: string[]
  notWritten: string[]
  /** Over HTTP the server lands the batch in flight by itself; --direct waits for it before closing the stores. */
  landed: Promise<unknown>
}

const POLL_MS = 250

/**
 * Writes the documents in requests of at most MAX_BATCH_BYTES / MAX_BATCH_DOCS, each as a job polled every POLL_MS for
 * the status line (files, chunks, rate, ETA, the file in flight). An abort of `interrupt` (Ctrl-C) cancels the job
 * running: its batch in flight still lands whole, nothing after it is written.
 */
async function writeDocuments(namespace: string, target: Target, pending: Pending[], existing: ReadonlyMap<string, Held> | undefined, interrupt: AbortController):
  Promise<{ chunks: number; generation?: number; derived?: DerivedReport; interrupted?: Interruption }> {
  const fileOf = new Map(pending.map((p) => [p.document.id, p.report.file]))
  const totalChunks = pending.reduce((n, p) => n + (p.report.chunks ?? 0), 0)
  const started = performance.now()
  let filesDone = 0
  let chunksDone = 0
  let generation: number | undefined
  let derived: DerivedReport | undefined
  let job: IngestJobView | undefined
  const filesOf = (from: number, to?: number) => pending.slice(from, to).filter((p) => p.report.outcome !== 'refused').map((p) => p.report.file)
  const status = new StatusLine(() => {
    const files = filesDone + (job?.documents.done ?? 0)
    const chunks = chunksDone + (job?.chunks.done ?? 0) + (job?.in_flight?.chunks.done ?? 0)
    const seconds = (performance.now() - started) / 1000
    const rate = chunks / Math.max(seconds, 0.001)
    const eta = rate > 0 ? `, ETA ${duration((totalChunks - chunks) / rate)}` : ''
    const flight = job?.in_flight ? ` — ${fileOf.get(job.in_flight.ids[0]!) ?? job.in_flight.ids[0]}${job.in_flight.ids.length > 1 ? ` (+${job.in_flight.ids.length - 1} more)` : ''} ` +
      `${job.in_flight.chunks.done}/${job.in_flight.chunks.total} chunks` : ''
    const sofar = job?.derived && derived ? addDerived(derived, job.derived) : job?.derived ?? derived
    const graph = sofar?.entities !== undefined ? `, derived ${sofar.entities} entities, ${sofar.relations ?? 0} relations` : ''
    return `${files}/${pending.length} files, ${chunks}/${totalChunks} chunks, ${rate.toFixed(1)} chunks/s, ${duration(seconds)}${eta}${graph}${flight}`
  })
  const show = (current: IngestJobView | undefined) => {
    job = current
    status.refresh()
  }
  for (const batch of batches(pending)) {
    if (interrupt.signal.aborted) break
    let running: RunningIngest
    try {
      running = await target.documents(namespace, batch.map((p) => p.document))
    } catch (error) {
      if (!isRefusal(error)) throw error
      // every document was checked alone before; what the service refuses of the batch, it refuses of each
      for (const p of batch) Object.assign(p.report, { outcome: 'refused', reason: `refused with its batch: ${error.message}` })
      filesDone += batch.length
      continue
    }
    job = await running.read()
    while (job.state === 'running') {
      show(job)
      if (interrupt.signal.aborted) {
        job = await running.cancel()
        status.done()
        const done = filesDone + job.documents.done
        const inFlight = job.state === 'running' ? job.in_flight?.ids.length ?? 0 : 0
        return {
          chunks: chunksDone + job.chunks.done, ...(generation !== undefined ? { generation } : {}),
          ...(derived ? { derived } : {}),
          interrupted: {
            written: filesOf(0, done),
            inFlight: filesOf(done, done + inFlight),
            notWritten: filesOf(done + inFlight),
            landed: (async () => { while ((await running.read()).state === 'running') await new Promise((resolve) => setTimeout(resolve, POLL_MS)) })()
          }
        }
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      job = await running.read()
    }
    if (job.state !== 'done' || !job.result) throw new Error(`${job.errors.join('; ') || `the ingest job ${job.state}`} (batch starting at "${batch[0]!.document.id}")`)
    filesDone += batch.length
    chunksDone += job.result.chunks
    generation = job.result.generation ?? generation
    if (job.result.derived) derived = addDerived(derived, job.result.derived)
    const unchanged = new Set(job.result.unchanged_ids)
    const notWritten = new Map<string, { outcome: 'skipped' | 'refused'; reason: string }>(
      (job.result.skipped ?? []).map((d) => [d.id, { outcome: 'skipped', reason: d.reason }]))
    for (const r of job.result.refused ?? []) notWritten.set(batch[r.index]!.document.id, { outcome: 'refused', reason: r.reason })
    for (const p of batch) {
      const not = notWritten.get(p.document.id)
      if (not) {
        // the job's chunks count only the documents it wrote or found unchanged
        Object.assign(p.report, not)
        delete p.report.chunks
      } else if (unchanged.has(p.document.id)) p.report.outcome = 'unchanged'
      else if (existing?.get(p.document.id)?.held) p.report.outcome = 'replaced'
    }
    show(undefined)
  }
  status.done()
  const stopped = interrupt.signal.aborted && filesDone < pending.length
    ? { interrupted: { written: filesOf(0, filesDone), inFlight: [], notWritten: filesOf(filesDone), landed: Promise.resolve() } } : {}
  return { chunks: chunksDone, ...(generation !== undefined ? { generation } : {}), ...(derived ? { derived } : {}), ...stopped }
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      url: { type: 'string' }, direct: { type: 'boolean', default: false }, namespace: { type: 'string', default: DEFAULT_NAMESPACE },
      json: { type: 'boolean', default: false }, resend: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' }
    },
    allowPositionals: true
  })
  if (values.help || positionals.length === 0) {
    console.error(USAGE)
    return values.help ? 0 : 2
  }
  const namespace = values.namespace!
  if (!isNamespace(namespace)) throw new Error(`--namespace ${JSON.stringify(namespace)} does not match ${NAMESPACE_PATTERN}`)
  const started = performance.now()
  const url = values.url ?? process.env.RECALL_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`
  const graphFiles = positionals.filter(isGraphFile)
  const documentPaths = positionals.filter((p) => !isGraphFile(p))
  // --direct: one set of stores (model load, lexical rebuild, …) for every file, opened when first needed
  let opened: Promise<Runtime> | undefined
  // A start-up step that cannot succeed (another process is the stores' only writer, other lexical settings) stops it here
  const onFatal = (step: string, error: Error): never => {
    console.error(`ingest failed: ${step}: ${error.message}`)
    process.exit(1)
  }
  // the stores (and what they load) are imported only with --direct, and opened only when first needed
  const openStores = async () => {
    const [{ loadConfig }, { openServices }, { createRuntime }] = await Promise.all([import('../config.js'), import('../services.js'), import('../runtime.js')])
    // the model loads when a chunk is first embedded: a run of unchanged files never loads it
    return createRuntime(await openServices(loadConfig(), { onFatal, lazyEmbedder: true }))
  }
  const target = values.direct ? directTarget(() => (opened ??= openStores())) : httpTarget(url)
  const reports: FileReport[] = []
  let chunks = 0
  let generation: number | undefined
  let derived: DerivedReport | undefined
  let interrupted = false
  // Ctrl-C: the first stops the run after the batch being written, a second exits at once
  const interrupt = new AbortController()
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) process.exit(EXIT_INTERRUPTED)
    interrupt.abort()
  })
  try {
    for (const file of graphFiles) reports.push(await ingestGraphFile(file, namespace, target))
    const read = documentPaths.length > 0 ? await readFiles(documentPaths) : []
    if (documentPaths.length > 0 && read.length === 0) {
      throw new Error(`no .md, .markdown, .txt, .html, .htm, .pdf, .docx or image (.png, .jpg, .jpeg, .webp, .tif, .tiff) files under ${documentPaths.join(', ')}`)
    }
    const documents = read.flatMap((r) => (r.outcome === 'read' ? [{ id: r.document.id, fingerprint: documentFingerprint(r.document) }] : []))
    // what the namespace holds of each document: those held unchanged are not sent (unless --resend)
    const asked = documents.length > 0 ? await target.held(namespace, documents) : undefined
    const held = asked?.held
    generation = asked?.generation
    const pending: Pending[] = []
    for (const r of read) {
      const file = displayPath(r.file)
      if (r.outcome !== 'read') { reports.push({ file, outcome: r.outcome, reason: r.reason }); continue }
      const { document } = r
      const meta = document.metadata ?? {}
      const unchanged = !values.resend && held?.get(document.id)?.unchanged ? held.get(document.id)!.chunks : undefined
      const described = {
        id: document.id, format: String(meta.format),
        ...(typeof meta.encoding === 'string' ? { encoding: meta.encoding } : {}), ...(typeof meta.pages === 'number' ? { pages: meta.pages } : {}),
        ...(typeof meta.normalised_chars === 'number' ? { normalised: meta.normalised_chars } : {}),
        ...(r.ocr ? { ocr: { pages: r.ocr.pages, confidence: r.ocr.confidence, low_confidence_pages: r.ocr.lowConfidence, failed_pages: r.ocr.failed } } : {})
      }
      const fileChunks = unchanged ?? chunkDocument(document).length
      if (fileChunks === 0) {
        // what the service would answer `skipped`: not sent
        reports.push({ file, outcome: 'skipped', reason: NO_TEXT_REASON, ...described })
        continue
      }
      const report: FileReport = { file, outcome: unchanged !== undefined ? 'unchanged' : 'ingested', chunks: fileChunks, ...described }
      reports.push(report)
      if (unchanged !== undefined) chunks += unchanged
      else pending.push({ document, report })
    }
    if (pending.length > 0) {
      const written = await writeDocuments(namespace, target, pending, held, interrupt)
      chunks += written.chunks
      generation = written.generation ?? generation
      if (written.derived) derived = written.derived
      if (written.interrupted) {
        // over HTTP the server finishes the batch in flight by itself; here the stores close once it has landed
        for (const line of interruptedLines(written.interrupted)) console.error(line)
        if (values.direct) console.error('finishing the batch in flight before closing the stores (Ctrl-C again stops at once: that batch is then written whole or not at all)')
        if (values.direct) await written.interrupted.landed
        interrupted = true
      }
    }
  } finally {
    // a failed open has already surfaced as the error being thrown
    await (await opened?.catch(() => undefined))?.close()
  }
  if (interrupted) return EXIT_INTERRUPTED
  const report = runReport({
    namespace, target: target.name, files: reports, chunks, seconds: (performance.now() - started) / 1000,
    ...(generation !== undefined ? { generation } : {}), ...(derived ? { derived } : {})
  })
  if (values.json) console.log(JSON.stringify(report))
  else for (const line of reportLines(report)) console.log(line)
  return report.counts.refused > 0 ? EXIT_REFUSED : 0
}

main().then((code) => { process.exitCode = code }, (error: unknown) => {
  console.error(`ingest failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})
