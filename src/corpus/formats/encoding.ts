import { analyse } from 'chardet'
import iconv from 'iconv-lite'

/** Bytes looked at to tell binary data and BOM-less UTF-16 from text. */
const SAMPLE_BYTES = 64 * 1024

export type Decoded = { text: string; encoding: string } | { binary: string }

const BOMS: ReadonlyArray<{ bytes: number[]; encoding: string }> = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'UTF-8' },
  { bytes: [0xff, 0xfe], encoding: 'UTF-16LE' },
  { bytes: [0xfe, 0xff], encoding: 'UTF-16BE' }
]

/**
 * A file's bytes as text, and the encoding they were read in: a byte-order mark decides; else bytes that are valid
 * UTF-8 are UTF-8; else NUL bytes mean UTF-16 without a mark (when they sit on every other byte, as in CJK or Latin
 * UTF-16) or binary data; else the encoding `declared` (an HTML `<meta charset>`), else the one chardet finds most
 * likely (GBK and GB2312 are read as GB18030, their superset). Whether the text is junk is for the caller to judge.
 */
export function decodeBytes(bytes: Uint8Array, declared?: string): Decoded {
  for (const bom of BOMS) {
    if (bom.bytes.every((b, i) => bytes[i] === b)) return { text: iconv.decode(Buffer.from(bytes.subarray(bom.bytes.length)), bom.encoding), encoding: bom.encoding }
  }
  const utf8 = strictUtf8(bytes)
  if (utf8 !== undefined) return { text: utf8, encoding: 'UTF-8' }
  const sample = bytes.subarray(0, SAMPLE_BYTES)
  if (sample.includes(0)) {
    const utf16 = utf16Order(sample)
    if (!utf16) return { binary: `binary data: ${count(sample, 0)} NUL bytes in its first ${sample.length}` }
    return { text: iconv.decode(Buffer.from(bytes), utf16), encoding: utf16 }
  }
  const encoding = usable(declared) ?? usable(analyse(sample)[0]?.name) ?? 'UTF-8'
  return { text: iconv.decode(Buffer.from(bytes), encoding), encoding }
}

function strictUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * UTF-16 without a byte-order mark: every ASCII character (space, newline, Latin letters, digits) has a NUL as its
 * high byte, while few other characters of the Basic Multilingual Plane have a NUL byte at all (U+XX00 only), so the
 * NULs sit mostly on one side of the byte pairs (at least twice as many as on the other); binary data has them on
 * both. Which side gives the byte order; a binary file that passes still decodes to junk (U+0000) the caller refuses.
 */
function utf16Order(sample: Uint8Array): 'UTF-16LE' | 'UTF-16BE' | undefined {
  let even = 0
  let odd = 0
  for (let i = 0; i < sample.length; i++) if (sample[i] === 0) i % 2 === 0 ? even++ : odd++
  if (odd >= 2 && odd >= 2 * even) return 'UTF-16LE'
  if (even >= 2 && even >= 2 * odd) return 'UTF-16BE'
  return undefined
}

function usable(name: string | undefined): string | undefined {
  if (!name) return undefined
  const upper = name.toUpperCase()
  if (upper === 'GBK' || upper === 'GB2312' || upper === 'GB18030') return 'GB18030'
  return iconv.encodingExists(name) ? name : undefined
}

function count(bytes: Uint8Array, value: number): number {
  let n = 0
  for (const b of bytes) if (b === value) n++
  return n
}
