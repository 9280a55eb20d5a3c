import { decodeBytes } from './encoding.js'
import { refused, type FileReading } from './reading.js'
import { readsAsTitle } from './title-line.js'

/**
 * Markdown or plain text, decoded as {@link decodeBytes} finds; front matter stays in the text (the chunker reads it).
 * Plain text's title is its first line when that reads as one ({@link readsAsTitle}) and more text follows it, without
 * the `#` marks a line written as a Markdown heading opens with (the line itself stays in the text as written); a
 * Markdown file's is its front matter's or its first `#` heading, which the chunker takes.
 */
export function readText(bytes: Uint8Array, format: 'markdown' | 'text'): FileReading {
  const decoded = decodeBytes(bytes)
  if ('binary' in decoded) return refused(decoded.binary)
  const title = format === 'text' ? firstLineTitle(decoded.text) : undefined
  return { outcome: 'read', text: decoded.text, ...(title ? { title } : {}), metadata: { format, encoding: decoded.encoding } }
}

function firstLineTitle(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '')
  const first = lines[0]?.replace(/^#{1,6}\s+/, '')
  return lines.length >= 2 && first !== undefined && readsAsTitle(first) ? first : undefined
}
