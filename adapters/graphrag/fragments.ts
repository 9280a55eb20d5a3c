/**
 * Names a question holds only in part: `流式返回` in a question, `流式返回接口` in the graph. The question's
 * fragments are the `minGram`- to `maxGram`-character pieces of its CJK runs and its Latin words; a fragment found inside
 * longer names (an index of the names' pieces, built once per graph version beside the name automaton) points at
 * them. Only the longest fragments count (one inside another that is found, or inside a name the question holds in
 * full, is not looked at), only when few names hold them (a piece of many names, `方法`, says nothing), and only for
 * names the fragment covers a large enough share of.
 */
export interface FragmentOptions {
  /** Longest CJK piece looked up, in characters. Default 6. */
  maxGram: number
  /**
   * Shortest fragment, in characters. Default 3: a two-character piece is a common word as often as a part of a
   * name (`原因`, `流程`, `手机`), and on the demo set it pointed at as many wrong names as right ones.
   */
  minGram: number
  /** A fragment inside more names than this is too common to point at any. Default 3. */
  maxNames: number
  /** Smallest share of a name's characters the fragment must cover. Default 0.5. */
  minShare: number
}

export const DEFAULT_FRAGMENT_OPTIONS: FragmentOptions = { maxGram: 6, minGram: 3, maxNames: 3, minShare: 0.5 }

/** A fragment of the question inside a longer name. */
interface FragmentHit {
  /** Index of the name among the keys the index was built from. */
  key: number
  /** The fragment, normalised. */
  fragment: string
  /** Where it starts in the normalised question (UTF-16 code units). */
  position: number
  /** Fragment length over the name's length, in characters. */
  share: number
}

export interface FragmentIndex {
  /**
   * The longer names the longest fragments of a question (normalised as the names are) fall inside, by position, then
   * key. A fragment strictly inside one of `named` (the spans of the names the question holds in full) is not looked
   * at: `大学` of a question naming `北京大学` is part of that name, no mention of `清华大学`; the name itself is.
   */
  lookup(text: string, named?: ReadonlyArray<{ start: number; end: number }>): FragmentHit[]
}

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu
const LATIN_WORD = /[\p{L}\p{N}_]+/gu
const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

interface Piece {
  text: string
  start: number
  end: number
}

/**
 * The pieces of a normalised text: every substring of minGram..maxGram characters of each CJK run, and each word of
 * the other letters and digits (whole, any length from minGram).
 */
function piecesOf(text: string, options: FragmentOptions): Piece[] {
  const pieces: Piece[] = []
  for (const run of text.matchAll(CJK_RUN)) {
    const chars = [...run[0]]
    // code unit offsets of each character, for positions in the question
    const offsets: number[] = []
    let at = run.index
    for (const ch of chars) {
      offsets.push(at)
      at += ch.length
    }
    offsets.push(at)
    for (let i = 0; i < chars.length; i++) {
      for (let n = options.minGram; n <= options.maxGram && i + n <= chars.length; n++) {
        pieces.push({ text: chars.slice(i, i + n).join(''), start: offsets[i]!, end: offsets[i + n]! })
      }
    }
  }
  for (const word of text.matchAll(LATIN_WORD)) {
    // CJK characters match \p{L} too: keep the other scripts' words only
    for (const part of word[0].split(CJK_RUN)) {
      if ([...part].length < options.minGram || CJK_CHAR.test(part)) continue
      const start = word.index + word[0].indexOf(part)
      pieces.push({ text: part, start, end: start + part.length })
    }
  }
  return pieces
}

/** Builds the index of the pieces of `keys` (normalised names and aliases, as the name matcher holds them). */
export function buildFragmentIndex(keys: readonly string[], options: FragmentOptions = DEFAULT_FRAGMENT_OPTIONS): FragmentIndex {
  // piece -> the keys holding it, at most maxNames + 1 of them (more only says "too many")
  const holders = new Map<string, number[]>()
  const lengths = keys.map((k) => [...k].length)
  keys.forEach((key, k) => {
    const seen = new Set<string>()
    for (const piece of piecesOf(key, options)) {
      if (piece.text === key || seen.has(piece.text)) continue
      seen.add(piece.text)
      let list = holders.get(piece.text)
      if (!list) holders.set(piece.text, (list = []))
      if (list.length <= options.maxNames) list.push(k)
    }
  })

  return {
    lookup(text: string, named = []): FragmentHit[] {
      const inside = (p: Piece, spans: ReadonlyArray<{ start: number; end: number }>) => spans.some((s) => s.start <= p.start && p.end <= s.end)
      // strictly inside: the name itself is looked up (`北京大学` of `北京大学医学部`), its parts are not
      const within = (p: Piece) => named.some((s) => s.start <= p.start && p.end <= s.end && p.end - p.start < s.end - s.start)
      const found = piecesOf(text, options).filter((p) => holders.has(p.text) && !within(p))
      // the longest first: a piece inside a longer one found is not looked at
      found.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start)
      const kept: Piece[] = []
      for (const piece of found) {
        if (inside(piece, kept)) continue
        kept.push(piece)
      }
      const hits: FragmentHit[] = []
      for (const piece of kept) {
        const list = holders.get(piece.text)!
        if (list.length > options.maxNames) continue
        const length = [...piece.text].length
        for (const key of list) {
          const share = length / lengths[key]!
          if (share >= options.minShare) hits.push({ key, fragment: piece.text, position: piece.start, share })
        }
      }
      return hits.sort((a, b) => a.position - b.position || a.key - b.key)
    }
  }
}
