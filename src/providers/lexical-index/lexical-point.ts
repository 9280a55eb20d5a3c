import { ANALYZERS, analyzerTag, type ServiceAnalyzer } from '../../kernel/analyzers.js'
import { BM25_PARAMS } from './scorer.js'
import { TOKEN_ID_SCHEME, tokenId } from './token-id.js'
import { documentWeight, referenceLength } from './weighted-bound.js'

/** The name of the sparse vector holding the lexical leg, beside the chunk's dense vector. */
export const LEXICAL_VECTOR = 'lex'
/**
 * The sparse vector of BM25's document parts w(t, d) under the reference length `lex_aref`, for the server to
 * rank candidates by (docs/scale-out.md, "Ranking on the server"); never read as a score.
 */
export const WEIGHTED_VECTOR = 'lexw'

/** What the lexical leg adds to a point's payload (docs/scale-out.md). */
export interface LexicalPayload {
  /** Tokens in the text: BM25's document length. */
  lex_len: number
  /** The distinct tokens, to confirm that a token id found in the sparse vector is that token. */
  lex_terms: string[]
  /** Only when tokens of this text share a token id: each one's own frequency. */
  lex_split?: Record<string, number>
  /** The average length (an integer) that `lexw`'s weights were computed with (integer index). */
  lex_aref: number
}

/** Every payload key of the lexical leg: what a reader of the points' other fields leaves out of its requests. */
export const LEXICAL_PAYLOAD_KEYS: readonly (keyof LexicalPayload)[] = ['lex_len', 'lex_terms', 'lex_split', 'lex_aref']

interface SparseVector { indices: number[]; values: number[] }

export interface LexicalPoint {
  /** Raw term frequencies by token id, indices ascending (colliding tokens summed, as Qdrant wants each index once). */
  sparse: SparseVector
  /** `lexw`: per token id, the document weight under `payload.lex_aref` (colliding tokens' weights summed). */
  weighted: SparseVector
  payload: LexicalPayload
}

/**
 * The parameters a collection's lexical leg was written with, kept in the collection's metadata: every
 * replica must analyze and score the same way, or two tokenisations would mix.
 */
export const LEXICAL_SETTINGS = lexicalSettings('cjk-bigram')

/** {@link LEXICAL_SETTINGS} of a collection analyzed with `analyzer`. */
export function lexicalSettings(analyzer: ServiceAnalyzer) {
  return { format: 1, analyzer: analyzerTag(analyzer), k1: BM25_PARAMS.k1, b: BM25_PARAMS.b, token_ids: TOKEN_ID_SCHEME } as const
}

/** The collection metadata key of {@link LEXICAL_SETTINGS}. */
export const LEXICAL_METADATA_KEY = 'recall_lexical'

/**
 * The lexical leg of one text, for its point. `averageLength` is the namespace's average length as the writer
 * knows it (any positive figure is correct, a close one keeps searches to one round); it is stored rounded.
 */
export function lexicalPoint(text: string, averageLength: number, analyzer: ServiceAnalyzer = 'cjk-bigram'): LexicalPoint {
  return lexicalPointOf(ANALYZERS[analyzer](text), averageLength)
}

/** The analyzed tokens of a batch of texts, and their average length (the reference when a namespace is new). */
export function analyzeBatch(texts: readonly string[], analyzer: ServiceAnalyzer = 'cjk-bigram'): { tokens: string[][]; averageLength: number } {
  const analyze = ANALYZERS[analyzer]
  const tokens = texts.map((t) => analyze(t))
  const total = tokens.reduce((n, t) => n + t.length, 0)
  return { tokens, averageLength: tokens.length === 0 ? 1 : total / tokens.length }
}

export function lexicalPointOf(tokens: readonly string[], averageLength: number): LexicalPoint {
  const aref = referenceLength(averageLength)
  const tf = new Map<string, number>()
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1)
  const byId = new Map<number, string[]>()
  for (const t of tf.keys()) {
    const id = tokenId(t)
    const held = byId.get(id)
    if (held) held.push(t)
    else byId.set(id, [t])
  }
  const indices = [...byId.keys()].sort((a, b) => a - b)
  const values = indices.map((id) => byId.get(id)!.reduce((n, t) => n + tf.get(t)!, 0))
  let split: Record<string, number> | undefined
  for (const held of byId.values()) {
    if (held.length < 2) continue
    split ??= {}
    for (const t of held) split[t] = tf.get(t)!
  }
  // 7 significant digits: float32 holds no more, and the JSON stays short (the bound's margin covers the rounding)
  const weights = indices.map((id) => Number(byId.get(id)!.reduce((w, t) => w + documentWeight(tf.get(t)!, tokens.length, aref), 0).toPrecision(7)))
  return {
    sparse: { indices, values },
    weighted: { indices, values: weights },
    payload: { lex_len: tokens.length, lex_terms: [...tf.keys()], ...(split ? { lex_split: split } : {}), lex_aref: aref }
  }
}
