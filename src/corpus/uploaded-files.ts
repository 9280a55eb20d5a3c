/**
 * The files of one upload (`POST /ingest/files`) read into documents, one after the other, by the readers the CLI
 * uses (src/corpus/files.ts, src/corpus/formats/): what could not be read (a file refused or skipped, a page OCR
 * failed on, a picture refused) is answered with its file and page, and the other files' documents are kept.
 */
import type { DocumentInput } from './documents/input.js'
import { readDocumentFile } from './files.js'
import type { OcrReader } from './formats/ocr-pages.js'

/** A file saved from the upload: where it is and its path below the upload's folder (its `source`). */
export interface UploadedFile { path: string; name: string }

/** A file, or a page or picture of one, that was not read, and why. */
export interface FileProblem {
  file: string
  /** The page (from 1) OCR failed on, for a page of a file otherwise read. */
  page?: number
  reason: string
}

/** What a reading tells as it goes: a file started, a page recognised (of `total` in that file), a problem. */
export interface FileReadingProgress {
  file(name: string): void
  page(name: string, page: number, total: number): void
  problem(problem: FileProblem): void
}

/**
 * Reads `files` (saved under `root`) in order. When `signal` aborts, the file being read stops (its OCR is ended and its
 * slots freed) and is left out, and no other file is read. Two files that make the same document id: the second is
 * refused, naming the first.
 */
export async function readUploadedFiles(
  root: string, files: readonly UploadedFile[], ocr: OcrReader | string, progress: FileReadingProgress, signal: AbortSignal
): Promise<DocumentInput[]> {
  const documents: DocumentInput[] = []
  const idsFrom = new Map<string, string>()
  for (const { path, name } of files) {
    if (signal.aborted) break
    progress.file(name)
    const reader = typeof ocr === 'object' ? { ...ocr, signal, onPage: (p: { page: number; total: number }) => progress.page(name, p.page, p.total) } : ocr
    const read = await readDocumentFile(path, root, reader, { confined: true })
    if (signal.aborted) break
    if (read.outcome !== 'read') {
      progress.problem({ file: name, reason: `${read.outcome}: ${read.reason}` })
      continue
    }
    const earlier = idsFrom.get(read.document.id)
    if (earlier !== undefined) {
      progress.problem({ file: name, reason: `refused: its document id "${read.document.id}" is that of ${earlier}, sent before it` })
      continue
    }
    idsFrom.set(read.document.id, name)
    for (const failed of read.ocr?.failed ?? []) progress.problem({ file: name, page: failed.page, reason: `page not recognised: ${failed.reason}` })
    for (const picture of read.imageProblems ?? []) progress.problem({ file: name, reason: `picture ${picture.src} not taken: ${picture.reason}` })
    documents.push(read.document)
  }
  return documents
}
