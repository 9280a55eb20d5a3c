/**
 * Token counters for packing a context: `o200k_base` and `cl100k_base` (OpenAI's encodings, the rank tables
 * js-tiktoken ships, offline) and `characters` (one token per Unicode code point, for a model whose tokenizer
 * is not one of them).
 *
 * The BPE encodings count exactly as js-tiktoken's `encode(text).length` does (test/context/tokenizers.test.ts
 * compares them), but faster: js-tiktoken joins byte arrays into string keys for every pair it ranks, which
 * costs ~20 µs per token on CJK text (its pieces run from one punctuation mark to the next). Here a piece's
 * bytes are a latin1 string, each merge re-ranks only its two neighbours, and a piece's count is memoised:
 * a text's count is the sum over the encoding's regex pieces, each encoded alone.
 */
import type { TiktokenBPE } from 'js-tiktoken/lite'

export const TOKENIZERS = ['o200k_base', 'cl100k_base', 'characters'] as const
export type TokenizerName = (typeof TOKENIZERS)[number]

export interface TokenCounter {
  readonly name: TokenizerName
  /** Tokens of `text`; special-token strings such as `<|endoftext|>` count as plain text. */
  count(text: string): number
}

/** `characters`: needs no table, so it is also available synchronously. */
export const characters: TokenCounter = {
  name: 'characters',
  count(text) {
    let n = 0
    // code points, not UTF-16 units: an astral character is one
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c < 0xd800 || c > 0xdbff) n++
    }
    return n
  }
}

/** Pieces memoised per encoding; past this many the memo starts again (a bound on memory, ~10 MB). */
const MEMO_LIMIT = 100_000
/** Texts of at least this many characters are memoised whole (a chunk packed again costs a lookup, not a regex pass). */
const TEXT_MEMO_MIN_CHARS = 64
/** Characters of memoised texts per encoding; past this the text memo starts again (~16 MB). */
const TEXT_MEMO_CHARS = 8_000_000

class BpeCounter implements TokenCounter {
  private readonly pattern: RegExp
  private readonly memo = new Map<string, number>()
  private readonly texts = new Map<string, number>()
  private textChars = 0
  private readonly encoder = new TextEncoder()

  constructor(readonly name: TokenizerName, bpe: TiktokenBPE, private readonly ranks: Map<string, number>) {
    this.pattern = new RegExp(bpe.pat_str, 'gu')
  }

  count(text: string): number {
    if (text.length < TEXT_MEMO_MIN_CHARS) return this.countPieces(text)
    let n = this.texts.get(text)
    if (n === undefined) {
      n = this.countPieces(text)
      if (this.textChars + text.length > TEXT_MEMO_CHARS) {
        this.texts.clear()
        this.textChars = 0
      }
      this.texts.set(text, n)
      this.textChars += text.length
    }
    return n
  }

  /** The sum over the encoding's regex pieces, each counted alone. */
  private countPieces(text: string): number {
    let n = 0
    this.pattern.lastIndex = 0
    for (let m = this.pattern.exec(text); m !== null; m = this.pattern.exec(text)) {
      const piece = m[0]
      let c = this.memo.get(piece)
      if (c === undefined) {
        c = this.countPiece(piece)
        if (this.memo.size >= MEMO_LIMIT) this.memo.clear()
        this.memo.set(piece, c)
      }
      n += c
    }
    return n
  }

  /** Tokens of one regex piece: byte-pair merges by lowest rank, as tiktoken does. */
  private countPiece(piece: string): number {
    const bytes = latin1(this.encoder.encode(piece))
    if (bytes.length <= 1 || this.ranks.has(bytes)) return 1
    // starts[i]: where part i begins; rank[i]: the rank of part i merged with part i + 1 (Infinity: no merge)
    const starts: number[] = []
    for (let i = 0; i <= bytes.length; i++) starts.push(i)
    const rankOf = (i: number): number => {
      if (i + 2 >= starts.length) return Infinity
      return this.ranks.get(bytes.slice(starts[i]!, starts[i + 2]!)) ?? Infinity
    }
    const rank: number[] = []
    for (let i = 0; i < starts.length - 1; i++) rank.push(rankOf(i))
    for (;;) {
      let best = Infinity
      let at = -1
      for (let i = 0; i < rank.length - 1; i++) if (rank[i]! < best) { best = rank[i]!; at = i }
      if (at < 0) break
      starts.splice(at + 1, 1)
      rank.splice(at + 1, 1)
      rank[at] = rankOf(at)
      if (at > 0) rank[at - 1] = rankOf(at - 1)
    }
    return starts.length - 1
  }
}

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')

/** js-tiktoken's compressed table (`! <first rank> <base64 token> …` per line) as token bytes (latin1) -> rank. */
function rankTable(bpe: TiktokenBPE): Map<string, number> {
  const ranks = new Map<string, number>()
  for (const line of bpe.bpe_ranks.split('\n')) {
    if (line === '') continue
    const parts = line.split(' ')
    const first = Number.parseInt(parts[1]!, 10)
    for (let i = 2; i < parts.length; i++) ranks.set(Buffer.from(parts[i]!, 'base64').toString('latin1'), first + i - 2)
  }
  return ranks
}

const loaded = new Map<TokenizerName, Promise<TokenCounter>>()

/** The counter of `name`; an encoding's table is read once, at first use (about a second). */
export function tokenCounter(name: TokenizerName): Promise<TokenCounter> {
  if (name === 'characters') return Promise.resolve(characters)
  let counter = loaded.get(name)
  if (counter === undefined) {
    counter = (name === 'o200k_base' ? import('js-tiktoken/ranks/o200k_base') : import('js-tiktoken/ranks/cl100k_base'))
      .then(({ default: bpe }) => new BpeCounter(name, bpe, rankTable(bpe)))
    loaded.set(name, counter)
  }
  return counter
}
