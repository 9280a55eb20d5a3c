/**
 * A typed client of recall: openapi-fetch over the types openapi-typescript generates from
 * `openapi/openapi.json` (`schema.d.ts`), and a few calls that throw on an error answer.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './schema.js'

export type { components, paths }

type Json<P extends keyof paths, M extends 'get' | 'post' | 'delete'> =
  paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never
type Ok<P extends keyof paths, M extends 'get' | 'post' | 'delete'> =
  paths[P][M] extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never

export type RetrieveBody = Json<'/retrieve', 'post'>
export type RetrieveResponse = Ok<'/retrieve', 'post'>
export type ContextBody = Json<'/context', 'post'>
export type ContextResponse = Ok<'/context', 'post'>
export type CompareBody = Json<'/retrieve/compare', 'post'>
export type CompareResponse = Ok<'/retrieve/compare', 'post'>
export type IngestDocumentsBody = Json<'/ingest/documents', 'post'>
export type IngestGraphBody = Json<'/ingest/graph', 'post'>
export type IngestEpisodesBody = Json<'/ingest/episodes', 'post'>
export type IngestConversationsBody = Json<'/ingest/conversations', 'post'>
export type IngestSummary = Ok<'/ingest/documents', 'post'>
/** An ingest job: progress, rate, ETA, and once ended its `result` (the synchronous answer, with the generation). */
export type IngestJob = Ok<'/ingest/jobs/{id}', 'get'>

export interface WaitOptions {
  /** Called with the job at every poll. */
  onProgress?: (job: IngestJob) => void
  /** Between polls, in ms. Default 500. */
  intervalMs?: number
}

/** An ingest job that failed: its `errors`, and the job (the batches before the failure stay written). */
export class IngestJobError extends Error {
  constructor(readonly job: IngestJob) {
    super(`ingest job ${job.id} ${job.state}: ${job.errors.join('; ') || 'no error given'}`)
    this.name = 'IngestJobError'
  }
}

/** The error body recall answers with, for a person and for code. */
export interface RecallErrorBody { statusCode: number; code: string; error: string; message: string }

/** A non-2xx answer, with recall's error body when there was one. */
export class RecallError extends Error {
  constructor(readonly status: number, readonly body: RecallErrorBody | undefined, path: string) {
    super(`${status} from ${path}: ${body?.message ?? 'no message'}${body?.code ? ` (${body.code})` : ''}`)
    this.name = 'RecallError'
  }
}

export interface RecallClientOptions {
  /** Where recall listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  /** Sent as `Authorization: Bearer <key>` when set. */
  apiKey?: string
  /** Another fetch (tests, proxies). Default: the global one. */
  fetch?: typeof fetch
}

export interface RecallClient {
  /** The openapi-fetch client itself: every route, typed. */
  readonly raw: Client<paths>
  retrieve(body: RetrieveBody): Promise<RetrieveResponse>
  context(body: ContextBody): Promise<ContextResponse>
  compare(body: CompareBody): Promise<CompareResponse>
  /**
   * Writes documents and answers what was written. A body the service runs as a job (over `INGEST_JOB_BODY_BYTES`) is
   * waited for, so the answer is the same either way; a job that fails or is cancelled throws an IngestJobError.
   */
  ingestDocuments(body: IngestDocumentsBody, wait?: WaitOptions): Promise<IngestSummary>
  /** Starts a job whatever the body's size (`wait=false`): the job, to poll with `ingestJob` or `waitForIngestJob`. */
  startIngestJob(body: IngestDocumentsBody): Promise<IngestJob>
  ingestJob(id: string): Promise<IngestJob>
  /** Asks the job to stop after its batch in flight (each document is then wholly written or not at all). */
  cancelIngestJob(id: string): Promise<IngestJob>
  /** Polls until the job has ended; the ended job, whatever its state. */
  waitForIngestJob(id: string, options?: WaitOptions): Promise<IngestJob>
  ingestGraph(body: IngestGraphBody): Promise<Ok<'/ingest/graph', 'post'>>
  ingestEpisodes(body: IngestEpisodesBody): Promise<Ok<'/ingest/episodes', 'post'>>
  /** Adds or updates conversations' sessions and turns (the other sessions are kept). */
  ingestConversations(body: IngestConversationsBody): Promise<Ok<'/ingest/conversations', 'post'>>
}

/** What openapi-fetch answers, as the 2xx body or a thrown RecallError. */
async function unwrap<T>(path: string, call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer
  try {
    answer = await call
  } catch (error) {
    throw new Error(`cannot reach recall for ${path}: ${(error as Error).message}`)
  }
  if (answer.response.ok && answer.data !== undefined) return answer.data
  const body = answer.error as RecallErrorBody | undefined
  throw new RecallError(answer.response.status, typeof body === 'object' ? body : undefined, path)
}

export function createRecallClient(options: RecallClientOptions): RecallClient {
  const raw = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/$/, ''),
    ...(options.apiKey ? { headers: { authorization: `Bearer ${options.apiKey}` } } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {})
  })
  const client: RecallClient = {
    raw,
    retrieve: (body) => unwrap('/retrieve', raw.POST('/retrieve', { body })),
    context: (body) => unwrap('/context', raw.POST('/context', { body })),
    compare: (body) => unwrap('/retrieve/compare', raw.POST('/retrieve/compare', { body })),
    async ingestDocuments(body, wait) {
      const answer = await unwrap('/ingest/documents', raw.POST('/ingest/documents', { body }))
      if (!('status_url' in answer)) return answer
      const job = await client.waitForIngestJob(answer.id, wait)
      if (job.state !== 'done' || !job.result) throw new IngestJobError(job)
      return job.result
    },
    startIngestJob: async (body) => {
      const answer = await unwrap('/ingest/documents', raw.POST('/ingest/documents', { body, params: { query: { wait: false } } }))
      if (!('status_url' in answer)) throw new Error('/ingest/documents answered when written instead of starting a job (a service older than ingest jobs)')
      return answer
    },
    ingestJob: (id) => unwrap('/ingest/jobs/{id}', raw.GET('/ingest/jobs/{id}', { params: { path: { id } } })),
    cancelIngestJob: (id) => unwrap('/ingest/jobs/{id}', raw.DELETE('/ingest/jobs/{id}', { params: { path: { id } } })),
    async waitForIngestJob(id, options = {}) {
      for (;;) {
        const job = await client.ingestJob(id)
        options.onProgress?.(job)
        if (job.state !== 'running') return job
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 500))
      }
    },
    ingestGraph: (body) => unwrap('/ingest/graph', raw.POST('/ingest/graph', { body })),
    ingestEpisodes: (body) => unwrap('/ingest/episodes', raw.POST('/ingest/episodes', { body })),
    ingestConversations: (body) => unwrap('/ingest/conversations', raw.POST('/ingest/conversations', { body }))
  }
  return client
}
