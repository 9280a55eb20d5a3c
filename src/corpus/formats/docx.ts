import mammoth from 'mammoth'
import { htmlToMarkdown } from './html.js'
import { refused, type FileReading } from './reading.js'

/**
 * A Word (`.docx`) file: mammoth turns its paragraphs into HTML by style (Heading 1–6 into `<h1>`–`<h6>`, lists,
 * tables), and {@link htmlToMarkdown} turns that into Markdown, so the headings stay headings.
 */
export async function readDocx(bytes: Uint8Array): Promise<FileReading> {
  let html: string
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value
  } catch (error) {
    return refused(`not a readable DOCX file: ${(error as Error).message}`)
  }
  const { markdown, title } = htmlToMarkdown(html)
  return { outcome: 'read', text: markdown, ...(title ? { title } : {}), metadata: { format: 'docx' } }
}
