import { readdir, stat } from 'node:fs/promises'
import { basename, extname, join, relative, resolve } from 'node:path'
import { MAX_DOCUMENT_CHARS } from '../schemas/ingest.js'
import { validateDocumentsBody } from './documents-body.js'
import type { DocumentMetadata } from '../kernel/document-fields.js'
import type { DocumentInput } from './documents/input.js'
import type { ImageProblem } from './images/image-input.js'
import { frontMatterOf } from './markdown.js'
import { isPlainText } from './plain-text.js'
import { DOCUMENT_EXTENSIONS, readFileByFormat } from './formats/index.js'
import type { OcrReader, OcrReport } from './formats/ocr-pages.js'

/** A file to read and the folder it was found under (its `source` is the path below that folder). */
export interface FoundFile { file: string; root: string }

/**
 * Every file under the given files or folders that a folder walk reads ({@link DOCUMENT_EXTENSIONS}; hidden files
 * and folders left out), sorted, with its root. A file named itself is taken whatever its extension.
 */
export async function findDocumentFiles(paths: readonly string[]): Promise<FoundFile[]> {
  const found: FoundFile[] = []
  for (const p of paths) {
    const abs = resolve(p)
    const info = await stat(abs).catch(() => null)
    if (!info) throw new Error(`no such file or folder: ${p}`)
    if (info.isFile()) {
      found.push({ file: abs, root: resolve(abs, '..') })
      continue
    }
    for (const file of await walk(abs)) found.push({ file, root: abs })
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : 1))
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...await walk(full))
    else if (DOCUMENT_EXTENSIONS.has(extname(entry.name).toLowerCase())) out.push(full)
  }
  return out
}

/** One file read: the document it makes, or why it was skipped or refused. `source` is its path below its root. */
export type FileDocument =
  | { file: string; source: string; outcome: 'read'; document: DocumentInput; imageProblems?: ImageProblem[]; ocr?: OcrReport }
  | { file: string; source: string; outcome: 'skipped' | 'refused'; reason: string }

/**
 * A file as a document, read by its format (docs/formats.md): the id is the front-matter `id`, else the path below
 * its root without the extension, with `/` turned into `-`; `source` is the path below the root; the title is the
 * front-matter `title`, else the format's own (an HTML `<title>`, a PDF's Title); `metadata` records the format, the
 * encoding the text was decoded from and a PDF's pages. The document is checked as `POST /ingest/documents` checks
 * one (a problem is a refusal naming the field, not the request's `documents/0`), and refused past
 * MAX_DOCUMENT_CHARS. `ocr` recognises image files and PDF pages without text (a string: why it cannot run here).
 * `confined`: the pictures a file names are read only from under `root` (files sent over HTTP).
 */
export async function readDocumentFile(file: string, root: string, ocr?: OcrReader | string, options: { confined?: boolean } = {}): Promise<FileDocument> {
  const source = (relative(root, file) || basename(file)).split('\\').join('/')
  let reading
  try {
    reading = await readFileByFormat(file, { ...(ocr !== undefined ? { ocr } : {}), ...(options.confined ? { confine: root } : {}) })
  } catch (error) {
    return { file, source, outcome: 'refused', reason: `cannot be read: ${(error as Error).message}` }
  }
  if (reading.outcome !== 'read') return { file, source, ...reading }
  const chars = codePoints(reading.text)
  if (chars > MAX_DOCUMENT_CHARS) {
    return {
      file, source, outcome: 'refused',
      reason: `${chars.toLocaleString('en')} characters of text, over the ${MAX_DOCUMENT_CHARS.toLocaleString('en')} one document may hold (MAX_DOCUMENT_CHARS); split the file`
    }
  }
  // plain text (a .txt file, a PDF, an image's text) has no front matter: a first line `---` is text
  const frontMatter = isPlainText(reading.metadata) ? {} : frontMatterOf(reading.text)
  const id = frontMatter.id ?? source.replace(/\.[^./]+$/, '').split('/').join('-').replace(/[#\s]+/g, '_')
  const title = frontMatter.title ?? reading.title
  const metadata = Object.fromEntries(Object.entries(reading.metadata).filter(([, v]) => v !== undefined)) as DocumentMetadata
  const document: DocumentInput = { id, text: reading.text, source, ...(title ? { title } : {}), metadata, ...(reading.images ? { images: reading.images } : {}) }
  const problems = validateDocumentsBody({ documents: [document] })
  if (problems.length > 0) {
    return { file, source, outcome: 'refused', reason: problems.map((p) => p.replace(/^body\/documents\/0\/|^documents\[0\]\./, '')).join('; ') }
  }
  return { file, source, outcome: 'read', document, ...(reading.imageProblems ? { imageProblems: reading.imageProblems } : {}), ...(reading.ocr ? { ocr: reading.ocr } : {}) }
}

/** Code points, as the schema's `maxLength` counts them. */
function codePoints(text: string): number {
  let n = 0
  for (const _ of text) n++
  return n
}

/** The documents of every file under `paths` (skipped files left out); throws on the first file refused, naming it. */
export async function readDocuments(paths: readonly string[]): Promise<DocumentInput[]> {
  const read = await Promise.all((await findDocumentFiles(paths)).map(({ file, root }) => readDocumentFile(file, root)))
  const refusedFile = read.find((r) => r.outcome === 'refused')
  if (refusedFile?.outcome === 'refused') throw new Error(`${refusedFile.file}: ${refusedFile.reason}`)
  return read.flatMap((r) => (r.outcome === 'read' ? [r.document] : []))
}
