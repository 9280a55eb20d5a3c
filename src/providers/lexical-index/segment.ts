/**
 * An immutable segment of the lexical index: documents, their term frequencies and lengths, and an
 * inverted index, all in typed arrays (so a segment moves between threads without copying and loads
 * from disk without parsing). Built from analysed documents or merged from other segments; the worker
 * does both, the main thread only reads.
 */

export interface SegmentData {
  name: string
  docCount: number
  termCount: number
  /** Sum of `lengths`. */
  totalLength: number
  /** Document ids as UTF-16 code units, in ordinal order; document `d` is `idChars[idStarts[d] .. idStarts[d + 1])`. */
  idChars: Uint16Array
  idStarts: Uint32Array
  /** Ordinals sorted by id (plain string order). */
  idOrder: Uint32Array
  /** Ordinal -> its position in `idOrder`: within a segment, a lower rank is a lower id. */
  idRank: Uint32Array
  /** Two 32-bit lanes of the content hash per document (see `contentHash`). */
  hashes: Uint32Array
  /** Tokens per document (BM25's document length). */
  lengths: Uint32Array
  termChars: Uint16Array
  termStarts: Uint32Array
  /** Open-addressing table of term ids by `hashTerm`, size a power of two, -1 where empty. */
  termTable: Int32Array
  /**
   * Postings of term `t`: `postDocs`/`postFreqs[postStarts[t] .. postStarts[t + 1])`, ordinals ascending. In the
   * main thread's memory these and the bounds below are packed (`packSegment`); in files and merges, 32 bits.
   */
  postStarts: Uint32Array
  postDocs: PackedUints
  postFreqs: PackedUints
  /** Per term, the largest frequency and the smallest document length among its postings (score bounds). */
  maxFreq: PackedUints
  minLength: PackedUints
}

/** Unsigned integers in the narrowest typed array that holds the largest of them. */
export type PackedUints = Uint8Array | Uint16Array | Uint32Array

/** `values` in the narrowest unsigned array that holds `max` (`values` itself when it is that narrow already). */
function packUints(values: PackedUints, max: number): PackedUints {
  const bytes = max <= 0xff ? 1 : max <= 0xffff ? 2 : 4
  if (values.BYTES_PER_ELEMENT === bytes) return values
  return bytes === 1 ? Uint8Array.from(values) : bytes === 2 ? Uint16Array.from(values) : Uint32Array.from(values)
}

function largest(values: PackedUints): number {
  let max = 0
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!
  return max
}

/**
 * The segment with its postings (document ordinals, frequencies) and per-term bounds each in the narrowest array that
 * holds its values: a posting of a segment under 65,536 documents whose frequency is under 256 takes 3 bytes, not 8
 * (issue 44). Searches read them as before; files keep 32 bits (`writeSegment` widens).
 */
export function packSegment(seg: SegmentData): SegmentData {
  return {
    ...seg,
    postDocs: packUints(seg.postDocs, seg.docCount - 1),
    postFreqs: packUints(seg.postFreqs, largest(seg.maxFreq)),
    maxFreq: packUints(seg.maxFreq, largest(seg.maxFreq)),
    minLength: packUints(seg.minLength, largest(seg.minLength))
  }
}

/** Per document, its term ids: kept on disk beside the segment, read to remove a document or to merge. */
export interface ForwardIndex {
  docTermStarts: Uint32Array
  docTerms: Uint32Array
}

export interface AnalysedDocument {
  id: string
  hash: readonly [number, number]
  tokens: readonly string[]
}

/** FNV-1a over UTF-16 code units: the term table's hash, of a string or of a stored term's chars. */
function hashTerm(term: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < term.length; i++) h = fnv1aStep(h, term.charCodeAt(i))
  return h >>> 0
}

function hashChars(chars: Uint16Array, from: number, to: number): number {
  let h = 0x811c9dc5
  for (let j = from; j < to; j++) h = fnv1aStep(h, chars[j]!)
  return h >>> 0
}

const fnv1aStep = (h: number, unit: number): number => Math.imul(h ^ unit, 0x01000193)

/**
 * A 64-bit content hash (two independent 32-bit lanes) of a document's text, for telling at start-up
 * whether a persisted document still matches the vector store's record.
 */
export function contentHash(text: string): [number, number] {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return [h1 >>> 0, h2 >>> 0]
}

function charsOf(strings: readonly string[]): { chars: Uint16Array; starts: Uint32Array } {
  const starts = new Uint32Array(strings.length + 1)
  for (let i = 0; i < strings.length; i++) starts[i + 1] = starts[i]! + strings[i]!.length
  const chars = new Uint16Array(starts[strings.length]!)
  strings.forEach((s, i) => {
    const at = starts[i]!
    for (let j = 0; j < s.length; j++) chars[at + j] = s.charCodeAt(j)
  })
  return { chars, starts }
}

function stringAt(chars: Uint16Array, starts: Uint32Array, i: number): string {
  const a = starts[i]!
  const b = starts[i + 1]!
  if (b - a <= 1024) return String.fromCharCode.apply(null, chars.subarray(a, b) as unknown as number[])
  let s = ''
  for (let j = a; j < b; j += 1024) s += String.fromCharCode.apply(null, chars.subarray(j, Math.min(b, j + 1024)) as unknown as number[])
  return s
}

export const docId = (seg: SegmentData, ordinal: number): string => stringAt(seg.idChars, seg.idStarts, ordinal)
const termAt = (seg: SegmentData, termId: number): string => stringAt(seg.termChars, seg.termStarts, termId)

function termTableOf(termChars: Uint16Array, termStarts: Uint32Array, termCount: number): Int32Array {
  let size = 16
  while (size < termCount * 2) size *= 2
  const table = new Int32Array(size).fill(-1)
  const mask = size - 1
  for (let t = 0; t < termCount; t++) {
    let slot = hashChars(termChars, termStarts[t]!, termStarts[t + 1]!) & mask
    while (table[slot] !== -1) slot = (slot + 1) & mask
    table[slot] = t
  }
  return table
}

/** The term id of `term` in `seg`, or -1. */
export function lookupTerm(seg: SegmentData, term: string): number {
  const table = seg.termTable
  const mask = table.length - 1
  let slot = hashTerm(term) & mask
  for (;;) {
    const t = table[slot]!
    if (t === -1) return -1
    const a = seg.termStarts[t]!
    if (seg.termStarts[t + 1]! - a === term.length) {
      let j = 0
      while (j < term.length && seg.termChars[a + j] === term.charCodeAt(j)) j++
      if (j === term.length) return t
    }
    slot = (slot + 1) & mask
  }
}

/** Compares document `ordinal`'s id with `id` in plain string order. */
function compareId(seg: SegmentData, ordinal: number, id: string): number {
  const a = seg.idStarts[ordinal]!
  const n = seg.idStarts[ordinal + 1]! - a
  const m = Math.min(n, id.length)
  for (let j = 0; j < m; j++) {
    const d = seg.idChars[a + j]! - id.charCodeAt(j)
    if (d !== 0) return d
  }
  return n - id.length
}

/** The ordinal of `id` in `seg`, or -1 (binary search over `idOrder`). */
export function findDoc(seg: SegmentData, id: string): number {
  let lo = 0
  let hi = seg.docCount - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const ordinal = seg.idOrder[mid]!
    const c = compareId(seg, ordinal, id)
    if (c === 0) return ordinal
    if (c < 0) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** Every typed array of a segment, for a transfer list. */
export function segmentBuffers(seg: SegmentData): ArrayBuffer[] {
  return [
    seg.idChars, seg.idStarts, seg.idOrder, seg.idRank, seg.hashes, seg.lengths, seg.termChars, seg.termStarts,
    seg.termTable, seg.postStarts, seg.postDocs, seg.postFreqs, seg.maxFreq, seg.minLength
  ].map((a) => a.buffer as ArrayBuffer)
}

function identity(n: number): Uint32Array {
  const out = new Uint32Array(n)
  for (let i = 0; i < n; i++) out[i] = i
  return out
}

/** Fills the per-term score bounds from the postings. */
function termBounds(termCount: number, postStarts: Uint32Array, postDocs: PackedUints, postFreqs: PackedUints, lengths: Uint32Array) {
  const maxFreq = new Uint32Array(termCount)
  const minLength = new Uint32Array(termCount)
  for (let t = 0; t < termCount; t++) {
    let mf = 0
    let ml = 0xffffffff
    for (let p = postStarts[t]!; p < postStarts[t + 1]!; p++) {
      if (postFreqs[p]! > mf) mf = postFreqs[p]!
      const len = lengths[postDocs[p]!]!
      if (len < ml) ml = len
    }
    maxFreq[t] = mf
    minLength[t] = ml
  }
  return { maxFreq, minLength }
}

/** A segment of `docs`, ordinals in id order; for a repeated id the last one counts. */
export function buildSegment(name: string, docs: readonly AnalysedDocument[]): { data: SegmentData; forward: ForwardIndex } {
  const byId = new Map<string, AnalysedDocument>()
  for (const d of docs) byId.set(d.id, d)
  const sorted = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const n = sorted.length
  const termIds = new Map<string, number>()
  const terms: string[] = []
  const lengths = new Uint32Array(n)
  const hashes = new Uint32Array(2 * n)
  const docTermStarts = new Uint32Array(n + 1)
  const rowTerms: number[] = []
  const rowFreqs: number[] = []
  let scratch = new Int32Array(1024)
  let totalLength = 0
  sorted.forEach((doc, d) => {
    const start = rowTerms.length
    for (const token of doc.tokens) {
      let t = termIds.get(token)
      if (t === undefined) {
        t = terms.length
        termIds.set(token, t)
        terms.push(token)
        if (t >= scratch.length) {
          const grown = new Int32Array(scratch.length * 2)
          grown.set(scratch)
          scratch = grown
        }
      }
      // scratch[t] holds 1 + the row position of term t while this document is being read
      const at = scratch[t]! - 1
      if (at >= start) rowFreqs[at]! += 1
      else {
        scratch[t] = rowTerms.length + 1
        rowTerms.push(t)
        rowFreqs.push(1)
      }
    }
    for (let p = start; p < rowTerms.length; p++) scratch[rowTerms[p]!] = 0
    docTermStarts[d + 1] = rowTerms.length
    lengths[d] = doc.tokens.length
    totalLength += doc.tokens.length
    hashes[2 * d] = doc.hash[0]
    hashes[2 * d + 1] = doc.hash[1]
  })
  const termCount = terms.length
  const postStarts = new Uint32Array(termCount + 1)
  for (const t of rowTerms) postStarts[t + 1]! += 1
  for (let t = 0; t < termCount; t++) postStarts[t + 1]! += postStarts[t]!
  const fill = postStarts.slice(0, termCount)
  const postDocs = new Uint32Array(rowTerms.length)
  const postFreqs = new Uint32Array(rowTerms.length)
  for (let d = 0; d < n; d++) {
    for (let p = docTermStarts[d]!; p < docTermStarts[d + 1]!; p++) {
      const t = rowTerms[p]!
      const at = fill[t]!++
      postDocs[at] = d
      postFreqs[at] = rowFreqs[p]!
    }
  }
  const ids = charsOf(sorted.map((d) => d.id))
  const termText = charsOf(terms)
  const data: SegmentData = {
    name, docCount: n, termCount, totalLength,
    idChars: ids.chars, idStarts: ids.starts, idOrder: identity(n), idRank: identity(n), hashes, lengths,
    termChars: termText.chars, termStarts: termText.starts, termTable: termTableOf(termText.chars, termText.starts, termCount),
    postStarts, postDocs, postFreqs, ...termBounds(termCount, postStarts, postDocs, postFreqs, lengths)
  }
  return { data, forward: { docTermStarts, docTerms: Uint32Array.from(rowTerms) } }
}

export interface MergeInput {
  data: SegmentData
  forward: ForwardIndex
  /** 1 for each removed ordinal; null when none is. */
  deleted: Uint8Array | null
}

/**
 * One segment holding the live documents of `inputs`, in input order (so each term's postings stay
 * sorted by concatenation). `maps[i][old ordinal]` is the new ordinal, -1 for a removed document.
 * `pause` is awaited now and then, so that a worker can answer other requests during a long merge.
 */
export async function mergeSegments(
  name: string, inputs: readonly MergeInput[], pause: () => Promise<void> = async () => undefined
): Promise<{ data: SegmentData; forward: ForwardIndex; maps: Int32Array[] }> {
  const live = (input: MergeInput, d: number) => input.deleted === null || input.deleted[d] === 0
  const maps = inputs.map((input) => new Int32Array(input.data.docCount).fill(-1))
  let n = 0
  inputs.forEach((input, i) => {
    for (let d = 0; d < input.data.docCount; d++) if (live(input, d)) maps[i]![d] = n++
  })
  // terms: new ids in order of first appearance, only for terms with a live posting
  const termIds = new Map<string, number>()
  const terms: string[] = []
  const termMaps: Int32Array[] = []
  for (const input of inputs) {
    const seg = input.data
    const counts = new Uint32Array(seg.termCount)
    for (let d = 0; d < seg.docCount; d++) {
      if (!live(input, d)) continue
      for (let p = input.forward.docTermStarts[d]!; p < input.forward.docTermStarts[d + 1]!; p++) counts[input.forward.docTerms[p]!]! += 1
    }
    const map = new Int32Array(seg.termCount).fill(-1)
    for (let t = 0; t < seg.termCount; t++) {
      if (counts[t] === 0) continue
      const term = termAt(seg, t)
      let id = termIds.get(term)
      if (id === undefined) {
        id = terms.length
        termIds.set(term, id)
        terms.push(term)
      }
      map[t] = id
      if ((t & 0xfff) === 0) await pause()
    }
    termMaps.push(map)
  }
  const termCount = terms.length
  const postStarts = new Uint32Array(termCount + 1)
  const docTermStarts = new Uint32Array(n + 1)
  const lengths = new Uint32Array(n)
  const hashes = new Uint32Array(2 * n)
  const ids: string[] = new Array<string>(n)
  let totalLength = 0
  inputs.forEach((input, i) => {
    const seg = input.data
    for (let d = 0; d < seg.docCount; d++) {
      const nd = maps[i]![d]!
      if (nd < 0) continue
      const rowLength = input.forward.docTermStarts[d + 1]! - input.forward.docTermStarts[d]!
      docTermStarts[nd + 1] = docTermStarts[nd]! + rowLength
      lengths[nd] = seg.lengths[d]!
      totalLength += seg.lengths[d]!
      hashes[2 * nd] = seg.hashes[2 * d]!
      hashes[2 * nd + 1] = seg.hashes[2 * d + 1]!
      ids[nd] = docId(seg, d)
      for (let p = input.forward.docTermStarts[d]!; p < input.forward.docTermStarts[d + 1]!; p++) {
        postStarts[termMaps[i]![input.forward.docTerms[p]!]! + 1]! += 1
      }
    }
  })
  await pause()
  for (let t = 0; t < termCount; t++) postStarts[t + 1]! += postStarts[t]!
  const total = postStarts[termCount]!
  const postDocs = new Uint32Array(total)
  const postFreqs = new Uint32Array(total)
  const docTerms = new Uint32Array(total)
  const fill = postStarts.slice(0, termCount)
  for (let i = 0; i < inputs.length; i++) {
    const { data: seg, forward } = inputs[i]!
    const map = maps[i]!
    const termMap = termMaps[i]!
    for (let t = 0; t < seg.termCount; t++) {
      const nt = termMap[t]!
      if (nt < 0) continue
      for (let p = seg.postStarts[t]!; p < seg.postStarts[t + 1]!; p++) {
        const nd = map[seg.postDocs[p]!]!
        if (nd < 0) continue
        const at = fill[nt]!++
        postDocs[at] = nd
        postFreqs[at] = seg.postFreqs[p]!
      }
      if ((t & 0xfff) === 0) await pause()
    }
    for (let d = 0; d < seg.docCount; d++) {
      const nd = map[d]!
      if (nd < 0) continue
      let at = docTermStarts[nd]!
      for (let p = forward.docTermStarts[d]!; p < forward.docTermStarts[d + 1]!; p++) docTerms[at++] = termMap[forward.docTerms[p]!]!
    }
  }
  await pause()
  const idOrder = identity(n)
  idOrder.sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0))
  const idRank = new Uint32Array(n)
  for (let r = 0; r < n; r++) idRank[idOrder[r]!] = r
  await pause()
  const idText = charsOf(ids)
  const termText = charsOf(terms)
  const data: SegmentData = {
    name, docCount: n, termCount, totalLength,
    idChars: idText.chars, idStarts: idText.starts, idOrder, idRank, hashes, lengths,
    termChars: termText.chars, termStarts: termText.starts, termTable: termTableOf(termText.chars, termText.starts, termCount),
    postStarts, postDocs, postFreqs, ...termBounds(termCount, postStarts, postDocs, postFreqs, lengths)
  }
  return { data, forward: { docTermStarts, docTerms }, maps }
}
