import { decodeBytes } from './encoding.js'
import { refused, type FileReading } from './reading.js'

/** Markdown or plain text, decoded as {@link decodeBytes} finds; front matter stays in the text (the chunker reads it). */
export function readText(bytes: Uint8Array, format: 'markdown' | 'text'): FileReading {
  const decoded = decodeBytes(bytes)
  if ('binary' in decoded) return refused(decoded.binary)
  return { outcome: 'read', text: decoded.text, metadata: { format, encoding: decoded.encoding } }
}
