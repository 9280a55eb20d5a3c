import createError from '@fastify/error'

/**
 * Every error code the service answers with. The body is always `{statusCode, code, error, message}`;
 * the error handler in `app.ts` maps provider errors and validation errors onto these.
 */
export const Errors = {
  badRequest: createError('RECALL_BAD_REQUEST', '%s', 400),
  invalidIngest: createError('RECALL_INGEST_INVALID', '%s', 400),
  /** `/context`: `max_tokens` below what even the first item needs (its marker, source and a few characters). */
  contextBudgetTooSmall: createError('RECALL_CONTEXT_BUDGET_TOO_SMALL', '%s', 400),
  notFound: createError('RECALL_NOT_FOUND', '%s', 404),
  /** A namespace whose vectors another embedding model made, read or written by this one (src/corpus/namespace-models.ts). */
  modelMismatch: createError('RECALL_MODEL_MISMATCH', '%s', 409),
  /** Node's parser waited too long for the request line and headers (src/http/client-error.ts). */
  requestTimeout: createError('RECALL_REQUEST_TIMEOUT', 'the request line and headers were not received in time', 408),
  /** The request line and headers are over Node's limit (src/http/client-error.ts). */
  headersTooLarge: createError('RECALL_HEADERS_TOO_LARGE', 'the request line and headers are larger than %s bytes; send a long question in a POST /retrieve JSON body', 431),
  /** A judged set over EVAL_MAX_QUESTIONS; the message names the bound. */
  evaluationTooLarge: createError('RECALL_EVALUATION_TOO_LARGE', '%s', 413),
  /** Already as many ingest jobs running in this process as it runs at once. */
  ingestBusy: createError('RECALL_INGEST_BUSY', '%s', 503),
  evaluationBusy: createError('RECALL_EVALUATION_BUSY', '%s', 503),
  evaluationTimeout: createError('RECALL_EVALUATION_TIMEOUT', '%s', 504),
  /** An upload's file, or its files in all, or their count, over its limit (`POST /ingest/files`). */
  filesTooLarge: createError('RECALL_PAYLOAD_TOO_LARGE', '%s', 413),
  payloadTooLarge: createError('RECALL_PAYLOAD_TOO_LARGE', 'request body is larger than %s bytes (BODY_LIMIT_BYTES)', 413),
  backendUnavailable: createError('RECALL_BACKEND_UNAVAILABLE', '%s is unavailable: %s', 503),
  backendTimeout: createError('RECALL_BACKEND_TIMEOUT', '%s did not answer in time: %s', 503),
  backendFailed: createError('RECALL_BACKEND_FAILED', '%s answered unexpectedly: %s', 503),
  /** Every requested hybrid leg failed; the message lists each failed leg with its backend and reason. */
  legsFailed: createError('RECALL_BACKEND_UNAVAILABLE', 'every requested hybrid leg failed: %s', 503),
  /** A read named a `min_generation` this replica has not seen within MIN_GENERATION_WAIT_MS (`Retry-After` says when to retry). */
  staleReplica: createError('RECALL_STALE_REPLICA', '%s', 503),
  internal: createError('RECALL_INTERNAL', 'internal error; the server log has the details', 500)
} as const
