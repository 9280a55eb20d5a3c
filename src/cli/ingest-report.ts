/** What happened to each file of an ingest run, and how the run reports it (text lines, or one JSON object). */
import type { DerivedReport } from '../corpus/write-path.js'

/** `unchanged`: the namespace held the document exactly as read already: nothing was embedded or written. */
export type FileOutcome = 'ingested' | 'replaced' | 'unchanged' | 'skipped' | 'refused'

export interface FileReport {
  /** The path as given on the command line, or below the folder given. */
  file: string
  outcome: FileOutcome
  /** Why it was skipped or refused. */
  reason?: string
  /** What went in: the document's id, chunks, format and encoding; or a graph or Episode file's counts. */
  id?: string
  chunks?: number
  format?: string
  encoding?: string
  pages?: number
  /** Characters of its text removed (or made a space) as carrying no meaning: control and invisible characters. */
  normalised?: number
  /** Pages read by OCR (from 1), those below the confidence floor (kept, flagged), and those that failed, with why. */
  ocr?: { pages: number[]; confidence: number; low_confidence_pages: number[]; failed_pages: Array<{ page: number; reason: string }> }
  detail?: string
}

/** Exit code of a run in which at least one file was refused (the others were still written). */
export const EXIT_REFUSED = 3

/** Exit code of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it). */
export const EXIT_INTERRUPTED = 130

/** What a Ctrl-C left, for stderr: what was written, what is landing, what was not, and that a re-run resumes. */
export function interruptedLines(stop: { written: string[]; inFlight: string[]; notWritten: string[] }): string[] {
  const list = (files: string[]) => (files.length <= 5 ? files.join(', ') : `${files.slice(0, 5).join(', ')} … and ${files.length - 5} more`)
  return [
    `interrupted: ${stop.written.length} files written (or found unchanged)${stop.written.length > 0 ? `: ${list(stop.written)}` : ''}`,
    stop.inFlight.length > 0
      ? `the batch in flight, ${stop.inFlight.length} files (${list(stop.inFlight)}), will land: each of them whole`
      : 'no batch was in flight',
    `${stop.notWritten.length} files not written${stop.notWritten.length > 0 ? `: ${list(stop.notWritten)}` : ''}`,
    'run the same command again to resume: the files written are skipped as unchanged'
  ]
}

export interface RunReport {
  namespace: string
  /** Where it was written: a service URL, or `direct`. */
  target: string
  files: FileReport[]
  counts: Record<FileOutcome, number>
  chunks: number
  seconds: number
  generation?: number
  /**
   * With derivation on: what the documents written by this run contribute to the derived graph and Episodes, summed
   * over its writes (the ingest answer's `derived`); absent when no document was written.
   */
  derived?: DerivedReport
}

export function runReport(fields: Omit<RunReport, 'counts'>): RunReport {
  const counts: Record<FileOutcome, number> = { ingested: 0, replaced: 0, unchanged: 0, skipped: 0, refused: 0 }
  for (const f of fields.files) counts[f.outcome] += 1
  return { ...fields, counts }
}

/** The report as lines: one per file (outcome, path, what went in or why not), then the totals. */
export function reportLines(report: RunReport): string[] {
  const width = Math.max(...report.files.map((f) => f.outcome.length), 8)
  const lines = report.files.map((f) => `${f.outcome.padEnd(width)}  ${f.file}  ${describe(f)}`.trimEnd())
  const { counts } = report
  lines.push(
    `${counts.ingested} ingested, ${counts.replaced} replaced, ${counts.unchanged} unchanged, ${counts.skipped} skipped, ${counts.refused} refused; ` +
    `${report.chunks} chunks in ${report.seconds.toFixed(1)} s (${(report.chunks / Math.max(report.seconds, 0.001)).toFixed(1)} chunks/s)` +
    `${report.target === 'direct' ? '' : ` into ${report.target}`}, namespace ${report.namespace}` +
    // a reader passes it as `min_generation` to see these documents on any replica
    (report.generation !== undefined ? `, generation ${report.generation}` : '')
  )
  const derived = report.derived
  if (derived?.entities !== undefined) {
    lines.push(`derived graph: ${derived.entities} entities, ${derived.relations ?? 0} relations from the documents written${derived.blocked ? ` (${derived.blocked} left to imported ones)` : ''}`)
  }
  if (derived?.episodes !== undefined) {
    lines.push(`derived Episodes: ${derived.episodes} episodes, ${derived.facets ?? 0} facets, ${derived.points ?? 0} points${derived.episodes_blocked ? ` (${derived.episodes_blocked} left to imported ones)` : ''}`)
  }
  if (derived?.llm) lines.push(`LLM extraction: ${derived.llm.calls} calls, ${derived.llm.total_tokens} tokens, ${derived.llm.cached} chunks cached, ${derived.llm.failed} failed`)
  return lines
}

function describe(f: FileReport): string {
  if (f.reason) return `(${f.reason})`
  const normalised = f.normalised ? `${f.normalised} control or invisible characters removed` : ''
  const parts = [
    f.id !== undefined ? `id ${f.id}` : '', f.chunks !== undefined ? `${f.chunks} chunks` : '',
    f.format ?? '', f.encoding ?? '', f.pages !== undefined ? `${f.pages} pages` : '', normalised, ocrNote(f), f.detail ?? ''
  ].filter(Boolean)
  return parts.length > 0 ? `(${parts.join(', ')})` : ''
}

/** `OCR pages 1-3 (confidence 0.91); low confidence: page 2; failed: page 4: <reason>` */
function ocrNote(f: FileReport): string {
  if (!f.ocr) return ''
  const { pages, confidence, low_confidence_pages: low, failed_pages: failed } = f.ocr
  return [
    pages.length > 0 ? `OCR ${pages.length === 1 ? 'page' : 'pages'} ${pages.join(', ')} (confidence ${confidence.toFixed(2)})` : '',
    low.length > 0 ? `low confidence (kept, flagged): ${low.length === 1 ? 'page' : 'pages'} ${low.join(', ')}` : '',
    ...failed.map((x) => `OCR failed on page ${x.page}: ${x.reason}`)
  ].filter(Boolean).join('; ')
}
