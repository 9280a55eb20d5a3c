/**
 * Terms a document shows to be words by repeating them: its frequent, cohesive CJK n-grams (`鉴权中间件` written three
 * times in different sentences is one word, whatever jieba's dictionary says). Counted over the document alone, so
 * that its contribution stays a function of its own chunks (docs/derivation.md, "Determinism").
 */
import type { DerivationOptions } from './options.js'
import { words } from './segment.js'

/** A run of Han characters of one sentence. */
const HAN_RUN = /\p{Script=Han}+/gu

/** Where an n-gram was seen: a run, and an offset in UTF-16 units (lengths too: a character outside the BMP counts 2). */
interface Occurrence { run: number; at: number }

/**
 * The document's frequent cohesive n-grams, longest first, from the plain-text sentences of its chunks. An n-gram of
 * `2..ngramMaxLength` Han characters (runs end at punctuation, Latin script and digits) is kept when
 * - it occurs at least `ngramMinCount` times outside the occurrences of longer kept n-grams (so a part of a kept
 *   n-gram that never occurs alone is not kept: the maximal ones are),
 * - over those occurrences, its left and its right neighbours each have an entropy of at least
 *   `ngramMinNeighbourEntropy` bits (the end of a run counts as a new neighbour each time): a run always followed by
 *   the same character (`鉴权中间` before `件`) is part of something longer,
 * - jieba's default dictionary takes it apart into at least one one-character piece (`鉴/权/中间件`, `左/氧氟沙星`,
 *   `平台/组`): an n-gram it reads as words of two or more characters is left to jieba, whose nouns make names
 *   already (the rest are phrases such as `可以使用`, `上面代码`),
 * - neither its first nor its last jieba piece is in `ngramEdgeStops` (`的鉴权`, `鉴权中间件由`), no piece is in
 *   `ngramInnerStops` (`数组的成员`, `属性和方法` are phrases), and it is no stop word,
 * - at least half of those occurrences start and end where jieba's words of their run do (`数组结` of `数组/结尾` does not).
 */
export function frequentNgrams(sentences: readonly string[], options: DerivationOptions): string[] {
  const minCount = options.ngramMinCount
  if (minCount <= 0) return []
  const runs = sentences.flatMap((s) => [...s.matchAll(HAN_RUN)].map((m) => m[0])).filter((r) => r.length >= 2)

  // level by level: an n-gram can be frequent only where both its (n-1)-grams are
  const candidates = new Map<string, Occurrence[]>()
  let frequent: Set<string> | undefined
  for (let n = 2; n <= options.ngramMaxLength; n++) {
    const seen = new Map<string, Occurrence[]>()
    runs.forEach((run, r) => {
      for (let at = 0; at + n <= run.length; at++) {
        if (splitsPair(run, at) || splitsPair(run, at + n)) continue
        if (frequent && (!frequent.has(run.slice(at, at + n - 1)) || !frequent.has(run.slice(at + 1, at + n)))) continue
        const gram = run.slice(at, at + n)
        let list = seen.get(gram)
        if (!list) seen.set(gram, (list = []))
        list.push({ run: r, at })
      }
    })
    frequent = new Set()
    for (const [gram, list] of seen) {
      if (list.length < minCount) continue
      frequent.add(gram)
      candidates.set(gram, list)
    }
    if (frequent.size === 0) break
  }

  const stops = new Set(options.stopWords.map((w) => w.toLowerCase()))
  const edgeStops = new Set(options.ngramEdgeStops)
  const innerStops = new Set(options.ngramInnerStops)
  const cutCache = new Map<number, Set<number>>()
  /** Where jieba's words of a run start and end, in characters. */
  const boundaries = (run: number) => {
    let cuts = cutCache.get(run)
    if (!cuts) {
      cuts = new Set([0])
      let at = 0
      for (const word of words(runs[run]!)) cuts.add((at += word.length))
      cutCache.set(run, cuts)
    }
    return cuts
  }
  const kept: string[] = []
  const covered = new Map<number, Array<[number, number]>>()
  const order = [...candidates.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0))
  for (const gram of order) {
    const n = gram.length
    const own = candidates.get(gram)!.filter(({ run, at }) => !(covered.get(run) ?? []).some(([s, e]) => s <= at && at + n <= e))
    if (own.length < minCount || stops.has(gram)) continue
    const left = own.map(({ run, at }, i) => (at > 0 ? runs[run]!.charAt(at - 1) : `\u0000${i}`))
    const right = own.map(({ run, at }, i) => (at + n < runs[run]!.length ? runs[run]!.charAt(at + n) : `\u0000${i}`))
    if (entropy(left) < options.ngramMinNeighbourEntropy || entropy(right) < options.ngramMinNeighbourEntropy) continue
    const pieces = words(gram)
    if (!pieces.some((p) => [...p].length === 1) || edgeStops.has(pieces[0]!) || edgeStops.has(pieces.at(-1)!) || pieces.some((p) => innerStops.has(p))) continue
    const aligned = own.filter(({ run, at }) => {
      const cuts = boundaries(run)
      return cuts.has(at) && cuts.has(at + n)
    })
    if (aligned.length * 2 < own.length) continue
    kept.push(gram)
    for (const { run, at } of own) {
      let spans = covered.get(run)
      if (!spans) covered.set(run, (spans = []))
      spans.push([at, at + n])
    }
  }
  return kept
}

/** Whether offset `i` of `text` falls between the two halves of a surrogate pair (a character outside the BMP). */
function splitsPair(text: string, i: number): boolean {
  const unit = text.charCodeAt(i)
  return i > 0 && i < text.length && unit >= 0xdc00 && unit <= 0xdfff
}

/** Shannon entropy, in bits, of the values' distribution. */
function entropy(values: readonly string[]): number {
  const counts = new Map<string, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  let h = 0
  for (const c of counts.values()) {
    const p = c / values.length
    h -= p * Math.log2(p)
  }
  return h
}
