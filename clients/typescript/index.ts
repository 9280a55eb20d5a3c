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
  ingestDocuments(body: IngestDocumentsBody): Promise<Ok<'/ingest/documents', 'post'>>
  ingestGraph(body: IngestGraphBody): Promise<Ok<'/ingest/graph', 'post'>>
  ingestEpisodes(body: IngestEpisodesBody): Promise<Ok<'/ingest/episodes', 'post'>>
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
  return {
    raw,
    retrieve: (body) => unwrap('/retrieve', raw.POST('/retrieve', { body })),
    context: (body) => unwrap('/context', raw.POST('/context', { body })),
    compare: (body) => unwrap('/retrieve/compare', raw.POST('/retrieve/compare', { body })),
    ingestDocuments: (body) => unwrap('/ingest/documents', raw.POST('/ingest/documents', { body })),
    ingestGraph: (body) => unwrap('/ingest/graph', raw.POST('/ingest/graph', { body })),
    ingestEpisodes: (body) => unwrap('/ingest/episodes', raw.POST('/ingest/episodes', { body }))
  }
}
