import { DOMParser, type Document } from '@xmldom/xmldom'
import JSZip from 'jszip'
import mammoth from 'mammoth'
import { htmlToMarkdown } from './html.js'
import { refused, type FileReading } from './reading.js'
import { readsAsTitle } from './title-line.js'

const DUBLIN_CORE = 'http://purl.org/dc/elements/1.1/'

/**
 * A Word (`.docx`) file: mammoth turns its paragraphs into HTML by style (Heading 1–6 into `<h1>`–`<h6>`, lists,
 * tables), and {@link htmlToMarkdown} turns that into Markdown, so the headings stay headings. The title is the
 * document's core property `dc:title` (File > Properties in Word and LibreOffice), else (no Heading 1, whose text
 * the chunker takes) its first paragraph when it reads as a title ({@link titleLike}), else `name`, the file name.
 */
export async function readDocx(bytes: Uint8Array, name?: string): Promise<FileReading> {
  let html: string
  let coreTitle: string | undefined
  try {
    const buffer = Buffer.from(bytes)
    html = (await mammoth.convertToHtml({ buffer })).value
    coreTitle = await coreTitleOf(buffer)
  } catch (error) {
    return refused(`not a readable DOCX file: ${(error as Error).message}`)
  }
  const { markdown } = htmlToMarkdown(html)
  const hasH1 = /^# /m.test(markdown)
  const title = coreTitle ?? (hasH1 ? undefined : titleLike(markdown) ?? name)
  return { outcome: 'read', text: markdown, ...(title ? { title } : {}), metadata: { format: 'docx' } }
}

/** The core properties' `dc:title` of a DOCX (`docProps/core.xml`), when it has a non-blank one. */
async function coreTitleOf(buffer: Buffer): Promise<string | undefined> {
  const zip = await JSZip.loadAsync(buffer)
  const core = await zip.file('docProps/core.xml')?.async('string')
  if (!core) return undefined
  let doc: Document
  try {
    doc = new DOMParser({ onError: () => undefined }).parseFromString(core, 'text/xml')
  } catch {
    // xmldom 0.9 throws on XML that is not well-formed: a broken core.xml names no title, the body is still read
    return undefined
  }
  const title = doc.getElementsByTagNameNS(DUBLIN_CORE, 'title').item(0)?.textContent?.replace(/\s+/g, ' ').trim()
  return title ? title : undefined
}

/**
 * The first block of a document's Markdown when it reads as a title: a paragraph (not a list, table, quote or code)
 * on one line that reads as a title (src/corpus/formats/title-line.ts: at most 50 characters, not ending like a
 * sentence), with more text after it.
 * Emphasis marks are dropped (a bold paragraph is the usual title of a document without heading styles).
 */
export function titleLike(markdown: string): string | undefined {
  const blocks = markdown.split(/\n\s*\n/).map((b) => b.trim()).filter((b) => b !== '')
  const first = blocks[0]
  if (first === undefined || blocks.length < 2 || first.includes('\n')) return undefined
  if (/^(?:[-*+]\s|>|\||\d+[.)]\s|```|#)/.test(first)) return undefined
  const text = first.replace(/\*\*|__|(?<!\w)[*_]|[*_](?!\w)/g, '').replace(/\\(.)/g, '$1').trim()
  if (!readsAsTitle(text)) return undefined
  return text
}
