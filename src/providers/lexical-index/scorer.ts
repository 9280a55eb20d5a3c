import type { LexicalHit } from './port.js'
import { docId, lookupTerm, type PackedUints, type SegmentData } from './segment.js'

/**
 * BM25 exactly as wink-bm25-text-search computes it (k1 1.2, b 0.75, idf = ln((N - n + 0.5)/(n + 0.5) + 1),
 * each document's term weight rounded to 4 decimals, a repeated query token counted each time), but from
 * live statistics at query time: N, n and the average length are those of the live documents now, where
 * wink bakes them into each weight once, at `consolidate()`.
 */
export const BM25_PARAMS = { k1: 1.2, b: 0.75, k: 1 } as const

/** A segment as a search sees it: the immutable data and what has been removed from it since. */
export interface LiveSegment {
  data: SegmentData
  /** 1 for each removed ordinal; null when none is. */
  deleted: Uint8Array | null
  /** Per term, how many removed documents contain it; null when none is removed. */
  deletedDf: Uint32Array | null
  liveDocs: number
  liveLength: number
}

const WINDOW = 4096
const scratchScores = new Int32Array(WINDOW)
const scratchSeen = new Uint32Array(WINDOW / 32)

interface Clause {
  idf: number
  /** How many times the query holds the term. */
  count: number
  /** Upper bound of the term's contribution in this segment, in units of 1e-4. */
  bound: number
  pos: number
  end: number
}

/**
 * The weight of one posting in units of 1e-4 (also the Qdrant lexical index's, so both score alike), with wink's operation order so that its 4-decimal rounding
 * gives the same figure (`toFixed(4)` and `Math.round(x * 1e4)` differ only on exact halves).
 */
export function weightUnits(tf: number, length: number, avgLength: number, idf: number): number {
  const { k1, b } = BM25_PARAMS
  const norm = (1 - b) + (b * (length / avgLength))
  return Math.round(((tf * (k1 + 1)) / ((k1 * norm) + tf)) * idf * 1e4)
}

/**
 * The top `limit` live documents for `tokens`, best first, equal scores by id ascending. Scores are summed as
 * integers (units of 1e-4, every term weight being rounded to 4 decimals), so a sum does not depend on the
 * order of its terms and ties are exact.
 *
 * Per segment, a MaxScore loop over windows of 4,096 ordinals: terms whose summed upper bounds cannot lift
 * a document into the current top `limit` are "non-essential"; only essential terms' postings are walked
 * (scores gathered in a dense window buffer), and non-essential terms are looked up (galloping search) just
 * for the documents that could still make it. `filter` is asked only for a document that would enter the
 * top `limit`, so a rejected one never takes a place.
 */
export function searchSegments(
  segments: readonly LiveSegment[], tokens: readonly string[], limit: number, filter?: (id: string) => boolean
): LexicalHit[] {
  const k = Math.floor(limit)
  if (!(k >= 1) || tokens.length === 0) return []
  let n = 0
  let totalLength = 0
  for (const s of segments) {
    n += s.liveDocs
    totalLength += s.liveLength
  }
  if (n === 0) return []
  const avgLength = totalLength / n
  const counts = new Map<string, number>()
  for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1)
  const terms = [...counts.keys()]
  // termIds[s][i]: id of terms[i] in segment s, or -1
  const termIds = segments.map((s) => terms.map((t) => lookupTerm(s.data, t)))
  const idfs = terms.map((_, i) => {
    let df = 0
    segments.forEach((s, si) => {
      const t = termIds[si]![i]!
      if (t >= 0) df += s.data.postStarts[t + 1]! - s.data.postStarts[t]! - (s.deletedDf ? s.deletedDf[t]! : 0)
    })
    return df === 0 ? 0 : Math.log(((n - df + 0.5) / (df + 0.5)) + BM25_PARAMS.k)
  })

  // The kept hits: a binary heap whose root is the worst one (lowest score, then highest id).
  const heapScore = new Float64Array(k)
  const heapSeg = new Int32Array(k)
  const heapDoc = new Int32Array(k)
  let size = 0
  const idCache = new Map<number, string>()
  const idOf = (seg: number, d: number): string => {
    const key = seg * 4294967296 + d
    let id = idCache.get(key)
    if (id === undefined) idCache.set(key, (id = docId(segments[seg]!.data, d)))
    return id
  }
  // whether (seg a, doc da) has the higher id of the two
  const idAfter = (sa: number, da: number, sb: number, db: number): boolean =>
    sa === sb ? segments[sa]!.data.idRank[da]! > segments[sb]!.data.idRank[db]! : idOf(sa, da) > idOf(sb, db)
  const worse = (i: number, j: number): boolean =>
    heapScore[i]! < heapScore[j]! || (heapScore[i] === heapScore[j] && idAfter(heapSeg[i]!, heapDoc[i]!, heapSeg[j]!, heapDoc[j]!))
  const swap = (i: number, j: number): void => {
    const s = heapScore[i]!, g = heapSeg[i]!, d = heapDoc[i]!
    heapScore[i] = heapScore[j]!; heapSeg[i] = heapSeg[j]!; heapDoc[i] = heapDoc[j]!
    heapScore[j] = s; heapSeg[j] = g; heapDoc[j] = d
  }
  const siftDown = (from: number): void => {
    let i = from
    for (;;) {
      const l = 2 * i + 1
      if (l >= size) return
      const r = l + 1
      const w = r < size && worse(r, l) ? r : l
      if (!worse(w, i)) return
      swap(i, w)
      i = w
    }
  }
  /** Whether a document scoring `score` would enter the kept hits. */
  const enters = (score: number, seg: number, d: number): boolean =>
    size < k || score > heapScore[0]! || (score === heapScore[0] && idAfter(heapSeg[0]!, heapDoc[0]!, seg, d))
  const push = (score: number, seg: number, d: number): void => {
    if (size < k) {
      let i = size++
      heapScore[i] = score; heapSeg[i] = seg; heapDoc[i] = d
      while (i > 0) {
        const p = (i - 1) >> 1
        if (!worse(i, p)) break
        swap(i, p)
        i = p
      }
    } else {
      heapScore[0] = score; heapSeg[0] = seg; heapDoc[0] = d
      siftDown(0)
    }
  }
  // A document can enter only with a score >= threshold (ties then go by id); -1 while the heap has room.
  const threshold = () => (size < k ? -1 : heapScore[0]!)

  segments.forEach((live, si) => {
    const seg = live.data
    const { postDocs, postFreqs, lengths } = seg
    const deleted = live.deleted
    const clauses: Clause[] = []
    terms.forEach((term, i) => {
      const t = termIds[si]![i]!
      if (t < 0 || idfs[i] === 0) return
      const count = counts.get(term)!
      // +1: the bound and a posting's weight are rounded separately
      const bound = (weightUnits(seg.maxFreq[t]!, seg.minLength[t]!, avgLength, idfs[i]!) + 1) * count
      clauses.push({ idf: idfs[i]!, count, bound, pos: seg.postStarts[t]!, end: seg.postStarts[t + 1]! })
    })
    if (clauses.length === 0) return
    clauses.sort((a, b) => a.bound - b.bound)
    // prefix[i]: sum of the bounds of clauses[0 .. i)
    const prefix = [0]
    for (const c of clauses) prefix.push(prefix[prefix.length - 1]! + c.bound)
    const firstEssential = () => {
      const th = threshold()
      let e = 0
      while (e < clauses.length && prefix[e + 1]! < th) e++
      return e
    }
    for (;;) {
      const e = firstEssential()
      if (e === clauses.length) return
      let next = Infinity
      for (let c = e; c < clauses.length; c++) {
        const cl = clauses[c]!
        if (cl.pos < cl.end && postDocs[cl.pos]! < next) next = postDocs[cl.pos]!
      }
      if (next === Infinity) return
      const base = next - (next % WINDOW)
      const stop = base + WINDOW
      for (let c = e; c < clauses.length; c++) {
        const cl = clauses[c]!
        let p = cl.pos
        while (p < cl.end) {
          const d = postDocs[p]!
          if (d >= stop) break
          const w = d - base
          scratchScores[w]! += weightUnits(postFreqs[p]!, lengths[d]!, avgLength, cl.idf) * cl.count
          scratchSeen[w >>> 5]! |= 1 << (w & 31)
          p++
        }
        cl.pos = p
      }
      for (let word = 0; word < WINDOW / 32; word++) {
        let bits = scratchSeen[word]!
        if (bits === 0) continue
        scratchSeen[word] = 0
        while (bits !== 0) {
          const bit = 31 - Math.clz32(bits & -bits)
          bits &= bits - 1
          const w = (word << 5) | bit
          const d = base + w
          let score = scratchScores[w]!
          scratchScores[w] = 0
          if (deleted !== null && deleted[d] === 1) continue
          let pruned = false
          for (let c = e - 1; c >= 0; c--) {
            if (score + prefix[c + 1]! < threshold()) {
              pruned = true
              break
            }
            const cl = clauses[c]!
            cl.pos = seek(postDocs, cl.pos, cl.end, d)
            if (cl.pos < cl.end && postDocs[cl.pos] === d) score += weightUnits(postFreqs[cl.pos]!, lengths[d]!, avgLength, cl.idf) * cl.count
          }
          if (pruned || score <= 0 || !enters(score, si, d)) continue
          if (filter && !filter(idOf(si, d))) continue
          push(score, si, d)
        }
      }
    }
  })

  const order = Array.from({ length: size }, (_, i) => i)
  order.sort((a, b) => (worse(a, b) ? 1 : worse(b, a) ? -1 : 0))
  return order.map((i) => ({ id: idOf(heapSeg[i]!, heapDoc[i]!), score: heapScore[i]! / 1e4 }))
}

/** The first position in `docs[from .. end)` holding an ordinal >= `target` (galloping, then binary search). */
function seek(docs: PackedUints, from: number, end: number, target: number): number {
  if (from >= end || docs[from]! >= target) return from
  let step = 1
  let lo = from
  let hi = from + 1
  while (hi < end && docs[hi]! < target) {
    lo = hi
    step *= 2
    hi = from + step
  }
  if (hi > end) hi = end
  while (lo + 1 < hi) {
    const mid = (lo + hi) >>> 1
    if (docs[mid]! < target) lo = mid
    else hi = mid
  }
  return hi
}
