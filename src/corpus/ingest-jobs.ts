/**
 * Document ingests that run as jobs: the documents are written in order, a batch of whole documents at a time, each
 * batch one write through the write path (the caller's `write`, i.e. `services.writePath.write`); progress, rate and ETA
 * are readable while it runs, and a cancel takes effect between batches, so every document is either wholly written
 * or not written at all (a job that reads files first stops the file being read at once, and writes none). Jobs live in the process that runs them: a restart forgets them (the batches written stay
 * written; sending the same documents again skips the unchanged ones), and with several replicas a job is read and
 * cancelled on the replica that answered its 202 (docs/api.md, "Ingest jobs").
 */
import type { ImagesReport } from './images/images-report.js'
import { randomUUID } from 'node:crypto'
import { chunkDocument } from './documents/chunking.js'
import type { DocumentInput } from './documents/input.js'
import type { IngestSummary } from './documents/ingest-summary.js'
import type { DerivedReport } from './write-path.js'
import type { NormalisedDocument, RefusedDocument } from './documents-body.js'
import type { FileProblem, FileReadingProgress } from './uploaded-files.js'

type IngestJobState = 'running' | 'done' | 'failed' | 'cancelled'

/** What one write of a batch answers (the write path's answer to a documents upsert). */
type BatchResult = IngestSummary & {
  generation?: number
  derived?: DerivedReport
  /** With `on_invalid: "skip"`: the documents of the body refused before the job started. */
  refused?: RefusedDocument[]
  /** The documents whose text was normalised. */
  normalised?: NormalisedDocument[]
}

/** A job as `GET /ingest/jobs/{id}` shows it. */
export interface IngestJobView {
  id: string
  namespace: string
  state: IngestJobState
  /** A cancel was asked for: the batch in flight still lands, no later one starts. */
  cancel_requested: boolean
  created_at: string
  finished_at?: string
  /** Documents written or found unchanged so far (always the first `done` of the body, in its order), and all of them. */
  documents: { done: number; total: number }
  /** Their chunks: the finished batches' and those of the batch in flight embedded so far. */
  chunks: { done: number; total: number }
  /** Since the job started. */
  rate: { documents_per_second: number; chunks_per_second: number }
  /** Seconds left at the rate so far; absent until a chunk is done, and once the job ended. */
  eta_seconds?: number
  /** The batch being written now: its document ids (they land together, whole) and its chunks embedded so far. */
  in_flight?: { ids: string[]; chunks: { done: number; total: number } }
  /** What the batches written so far contribute to the derived structures (with derivation on); `result.derived` at the end. */
  derived?: DerivedReport
  /** Files read (`POST /ingest/files`): read or found unreadable so far, and all of them; documents are written once all are read. */
  files?: { done: number; total: number }
  /** Pages recognised by OCR (or failed): done, and in all in the files opened so far. */
  pages?: { done: number; total: number }
  /** The file being read, and the page OCR last finished in it. */
  reading?: { file: string; page?: number }
  /** Why the job failed (it stops at the first failed batch; the batches before it stay written); and each file, page or picture not read (`file_errors`), as a sentence. */
  errors: string[]
  /** Files (`POST /ingest/files`), pages and pictures that were not read, with their reasons; the others are written. */
  file_errors?: FileProblem[]
  /**
   * Once the job ended: what was written, as the synchronous answer of `POST /ingest/documents` says it (over the
   * documents done), with the generation to pass as `min_generation` to read them on any replica.
   */
  result?: BatchResult
  took_ms: number
}

export interface IngestJobsOptions {
  /** Writes one batch (through the write path), reporting chunks embedded of the batch's changed ones. */
  write: (namespace: string, documents: DocumentInput[], onProgress: (embedded: number, total: number) => void) => Promise<BatchResult>
  /** A batch holds whole documents, about this many chunks (at least one document). */
  batchChunks: number
  /** The chunks of a document the namespace holds unchanged, which need not be chunked again to be counted; undefined otherwise. */
  heldChunks?: (namespace: string, document: DocumentInput) => number | undefined
  /** How long an ended job stays readable, in ms. Default one hour. */
  keepMs?: number
  /** Most jobs running at once in this process; more are refused. Default 4. */
  maxRunning?: number
  /** Called once when a job ends (the log line, the metrics). */
  onEnd?: (job: IngestJobView) => void
}

export class IngestJobLimitError extends Error {}

/** Files a job reads into documents before it writes them (an upload), reporting as it goes. */
export interface JobReading {
  files: number
  /** The documents of the files; `signal` aborts on a cancel, stopping the file being read (its OCR too). */
  read(progress: FileReadingProgress, signal: AbortSignal): Promise<DocumentInput[]>
  /** Called once the job has ended, whatever its end (the upload's folder removed). */
  finish(): Promise<void>
}

interface Entry {
  view: IngestJobView
  started: number
  cancel: boolean
  /** Aborted on a cancel: stops the reading of files in flight. */
  stop: AbortController
  ended: Promise<IngestJobView>
  timer?: NodeJS.Timeout
}

/** Consecutive documents grouped into batches of about `budget` chunks each; a document is never split. */
export function batchesOf(chunkCounts: readonly number[], budget: number): Array<{ from: number; to: number; chunks: number }> {
  const out: Array<{ from: number; to: number; chunks: number }> = []
  let from = 0
  let chunks = 0
  chunkCounts.forEach((n, i) => {
    if (i > from && chunks + n > budget) {
      out.push({ from, to: i, chunks })
      from = i
      chunks = 0
    }
    chunks += n
  })
  if (from < chunkCounts.length) out.push({ from, to: chunkCounts.length, chunks })
  return out
}

const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places

export class IngestJobs {
  readonly #jobs = new Map<string, Entry>()
  readonly #options: IngestJobsOptions

  constructor(options: IngestJobsOptions) {
    this.#options = options
  }

  /**
   * Starts writing `documents` (already checked) into `namespace`; the job as it is now. `told` is what the check
   * found of the body, which the job's `result` says too: the documents it refused (`on_invalid: "skip"`) and those
   * it normalised.
   */
  start(namespace: string, documents: readonly DocumentInput[] | JobReading, told: Pick<BatchResult, 'refused' | 'normalised'> = {}): IngestJobView {
    const running = [...this.#jobs.values()].filter((e) => e.view.state === 'running').length
    const max = this.#options.maxRunning ?? 4
    if (running >= max) throw new IngestJobLimitError(`${running} ingest jobs are running in this process; at most ${max} run at once: retry when one has ended`)
    const view: IngestJobView = {
      id: randomUUID(), namespace, state: 'running', cancel_requested: false, created_at: new Date().toISOString(),
      documents: { done: 0, total: Array.isArray(documents) ? documents.length : 0 }, chunks: { done: 0, total: 0 },
      rate: { documents_per_second: 0, chunks_per_second: 0 }, errors: [], took_ms: 0,
      ...(Array.isArray(documents) ? {} : { files: { done: 0, total: (documents as JobReading).files }, pages: { done: 0, total: 0 }, file_errors: [] })
    }
    const entry: Entry = { view, started: performance.now(), cancel: false, stop: new AbortController(), ended: Promise.resolve(view) }
    this.#jobs.set(view.id, entry)
    const reading = Array.isArray(documents) ? undefined : documents as JobReading
    const run = reading
      ? this.#read(entry, reading).then((read) => this.#run(entry, read, told)).finally(() => reading.finish())
      : this.#run(entry, [...documents as readonly DocumentInput[]], told)
    entry.ended = run.then(() => {
      view.finished_at = new Date().toISOString()
      this.#refresh(entry)
      delete view.eta_seconds
      delete view.in_flight
      delete view.reading
      entry.timer = setTimeout(() => this.#jobs.delete(view.id), this.#options.keepMs ?? 3_600_000)
      entry.timer.unref()
      this.#options.onEnd?.(view)
      return view
    })
    return this.#refresh(entry)
  }

  /** The job as it is now; undefined for an unknown id (or one that ended over `keepMs` ago). */
  get(id: string): IngestJobView | undefined {
    const entry = this.#jobs.get(id)
    return entry ? this.#refresh(entry) : undefined
  }

  /** Asks a running job to stop after its batch in flight; the job as it is now, undefined for an unknown id. */
  cancel(id: string): IngestJobView | undefined {
    const entry = this.#jobs.get(id)
    if (!entry) return undefined
    if (entry.view.state === 'running') {
      entry.cancel = true
      entry.view.cancel_requested = true
      entry.stop.abort(new Error('the job was cancelled'))
    }
    return this.#refresh(entry)
  }

  /** The jobs running now. */
  running(): IngestJobView[] {
    return [...this.#jobs.values()].filter((e) => e.view.state === 'running').map((e) => this.#refresh(e))
  }

  /** The job once it has ended. */
  async ended(id: string): Promise<IngestJobView | undefined> {
    return this.#jobs.get(id)?.ended
  }

  /** Cancels every running job and waits for their batches in flight to land (the service is closing). */
  async close(): Promise<void> {
    const running = [...this.#jobs.values()].filter((e) => e.view.state === 'running')
    for (const e of running) {
      e.cancel = true
      e.stop.abort(new Error('the service is closing'))
    }
    await Promise.allSettled(running.map((e) => e.ended))
    for (const e of this.#jobs.values()) clearTimeout(e.timer)
  }

  /** The files of `reading` as documents, the view's files, pages and problems kept as they go; none when it fails. */
  async #read(entry: Entry, reading: JobReading): Promise<DocumentInput[]> {
    const { view } = entry
    const pagesOf = new Map<string, number>()
    let current: string | undefined
    const progress: FileReadingProgress = {
      file: (name) => {
        if (current !== undefined) view.files!.done++
        current = name
        view.reading = { file: name }
      },
      page: (name, page, total) => {
        if (!pagesOf.has(name)) view.pages!.total += total
        pagesOf.set(name, total)
        view.pages!.done++
        view.reading = { file: name, page }
      },
      problem: (problem) => {
        view.file_errors!.push(problem)
        view.errors.push(`${problem.file}${problem.page !== undefined ? `, page ${problem.page}` : ''}: ${problem.reason}`)
      }
    }
    try {
      const documents = await reading.read(progress, entry.stop.signal)
      // a file whose reading a cancel stopped is not read
      if (current !== undefined && !entry.stop.signal.aborted) view.files!.done++
      view.documents.total = documents.length
      return documents
    } catch (error) {
      view.errors.push(`reading the files failed: ${error instanceof Error ? error.message : String(error)}`)
      view.state = 'failed'
      return []
    } finally {
      delete view.reading
    }
  }

  async #run(entry: Entry, documents: DocumentInput[], told: Pick<BatchResult, 'refused' | 'normalised'>): Promise<void> {
    const { view } = entry
    const result: BatchResult = { documents: 0, chunks: 0, replaced: 0, unchanged: 0, unchanged_ids: [], took_ms: 0, ...told }
    try {
      const counts: number[] = []
      for (const d of documents) {
        counts.push(this.#options.heldChunks?.(view.namespace, d) ?? chunkDocument(d).length)
        view.chunks.total += counts.at(-1)!
        // a body of many large documents is chunked one document per turn, so that the process keeps answering
        await new Promise((resolve) => setImmediate(resolve))
      }
      for (const batch of batchesOf(counts, this.#options.batchChunks)) {
        if (entry.cancel) break
        const docs = documents.slice(batch.from, batch.to)
        const flight = { ids: docs.map((d) => d.id), chunks: { done: 0, total: batch.chunks } }
        view.in_flight = flight
        const written = await this.#options.write(view.namespace, docs, (embedded) => { flight.chunks.done = Math.min(embedded, batch.chunks) })
        delete view.in_flight
        view.documents.done = batch.to
        view.chunks.done += batch.chunks
        add(result, written)
        if (result.derived) view.derived = result.derived
      }
      if (view.state === 'running') {
        const unread = view.files !== undefined && view.files.done < view.files.total
        view.state = entry.cancel && (unread || view.documents.done < view.documents.total) ? 'cancelled' : 'done'
      }
    } catch (error) {
      view.state = 'failed'
      view.errors.push(error instanceof Error ? error.message : String(error))
    }
    result.took_ms = round(performance.now() - entry.started)
    view.took_ms = result.took_ms
    view.result = result
  }

  #refresh(entry: Entry): IngestJobView {
    const { view } = entry
    const seconds = (performance.now() - entry.started) / 1000
    if (view.state === 'running') view.took_ms = round(seconds * 1000)
    const chunksDone = view.chunks.done + (view.in_flight?.chunks.done ?? 0)
    const elapsed = view.took_ms / 1000
    view.rate = {
      documents_per_second: elapsed > 0 ? round(view.documents.done / elapsed) : 0,
      chunks_per_second: elapsed > 0 ? round(chunksDone / elapsed) : 0
    }
    if (view.state === 'running' && view.rate.chunks_per_second > 0) {
      view.eta_seconds = round(Math.max(0, view.chunks.total - chunksDone) / (chunksDone / seconds), 1)
    }
    return {
      ...view, documents: { ...view.documents }, chunks: { ...view.chunks }, errors: [...view.errors],
      ...(view.files ? { files: { ...view.files } } : {}), ...(view.pages ? { pages: { ...view.pages } } : {}),
      ...(view.reading ? { reading: { ...view.reading } } : {}), ...(view.file_errors ? { file_errors: view.file_errors.map((p) => ({ ...p })) } : {}),
      ...(view.derived ? { derived: { ...view.derived } } : {}),
      ...(view.in_flight ? { in_flight: { ids: [...view.in_flight.ids], chunks: { ...view.in_flight.chunks } } } : {})
    }
  }
}

/** Adds one batch's answer to the job's: counts summed, the latest generation, derived contributions summed. */
function add(total: BatchResult, batch: BatchResult): void {
  total.documents += batch.documents
  total.chunks += batch.chunks
  total.replaced += batch.replaced
  total.unchanged += batch.unchanged
  total.unchanged_ids.push(...batch.unchanged_ids)
  if (batch.skipped) (total.skipped ??= []).push(...batch.skipped)
  if (batch.generation !== undefined) total.generation = Math.max(total.generation ?? 0, batch.generation)
  if (batch.derived) total.derived = addDerived(total.derived, batch.derived)
  if (batch.images) total.images = addImages(total.images, batch.images)
}

/** Two writes' picture counts summed, their refusals joined. */
function addImages(total: ImagesReport | undefined, more: ImagesReport): ImagesReport {
  if (!total) return { ...more, refused: [...more.refused] }
  return {
    written: total.written + more.written, unchanged: total.unchanged + more.unchanged, small: total.small + more.small,
    removed: total.removed + more.removed, refused: [...total.refused, ...more.refused]
  }
}

/** Two writes' derived counts summed (a job's batches, the CLI's jobs), the LLM's calls, chunks and tokens too. */
export function addDerived(total: DerivedReport | undefined, more: DerivedReport): DerivedReport {
  return sumCounts(total ?? {}, more) as DerivedReport
}

function sumCounts(a: object, b: object): Record<string, unknown> {
  const sum: Record<string, unknown> = { ...a }
  for (const [key, value] of Object.entries(b)) {
    const before = sum[key]
    sum[key] = typeof value === 'number' ? ((before as number | undefined) ?? 0) + value
      : value && typeof value === 'object' ? sumCounts(before && typeof before === 'object' ? before : {}, value) : value
  }
  return sum
}
