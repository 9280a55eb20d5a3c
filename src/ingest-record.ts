import type { IngestOutcome, RecallMetrics } from './metrics.js'

/** Where the line goes: the service's logger (pino, as the HTTP layer's). */
export interface IngestLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}
import type { ImagesReport } from './corpus/images/images-report.js'

/** What the log line of one document ingest says (a request, a job, an MCP call). */
export interface IngestRecord {
  namespace: string
  outcome: IngestOutcome
  /** Documents written or found unchanged. */
  documents: number
  chunks: number
  replaced: number
  unchanged: number
  /** Documents not written because the body was refused (a 400 or 413 refuses all of them). */
  refused: number
  ms: number
  /** The job's id, for an ingest that ran as a job. */
  job?: string
  /** Why it was refused or failed. */
  error?: string
  /** What the write did with the documents' pictures. */
  images?: ImagesReport
}

/**
 * One ingest, recorded once: one log line (`ingest`, with namespace, documents, chunks, replaced, unchanged, refused and
 * ms) and the ingest counters of `/metrics`.
 */
export function recordIngest(log: IngestLogger, metrics: RecallMetrics, record: IngestRecord): void {
  const level = record.outcome === 'failed' ? 'warn' : 'info'
  const { images, ...logged } = record
  log[level]({ ...logged, ms: Math.round(record.ms * 10) / 10, ...(images ? { images: { ...images, refused: images.refused.length } } : {}) }, 'ingest')
  metrics.ingest(record.outcome, { written: record.documents - record.unchanged, unchanged: record.unchanged, refused: record.refused })
  if (images) metrics.images({ ...images, refused: images.refused.length })
}

/** A written ingest's outcome: `unchanged` when every document was held already. */
export const writtenOutcome = (documents: number, unchanged: number): IngestOutcome => (documents > 0 && unchanged === documents ? 'unchanged' : 'written')
