/**
 * Lexical bonuses on normalised hit scores (m-flow `exact_match_bonus.py`).
 * A bonus lowers a score (lower is better), never below 0 and never upwards.
 */
import { RELATION_COLLECTION, type EpisodicConfig } from './config.js'
import type { CollectionHits, PreprocessedQuery, ScoredHit } from './types.js'

const NORM_SEPARATORS = /[\s，,。.；;：:！!？?、]+/gu
const CJK = /[\u4e00-\u9fff]/u
const UNITS = '万|亿|TB|GB|MB|KB|次|个|条|人|家|分钟|分|秒|小时|天|月|年|元|%'
const UNIT_TOKEN = new RegExp(`(\\p{Nd}+\\.?\\p{Nd}*)\\s*(${UNITS})`, 'giu')
const UNIT_AFTER = new RegExp(`^\\s*(?:${UNITS})`, 'iu')
// Python's `\b` is Unicode-aware (CJK characters are word characters): a boundary is a change of
// word status between the two neighbouring characters.
const W = '[\\p{L}\\p{N}_]'
const BOUNDARY = `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))`
const PURE_TOKEN = new RegExp(`${BOUNDARY}(\\p{Nd}+\\.?\\p{Nd}*)${BOUNDARY}`, 'gu')
const ENGLISH_WORD = /[A-Za-z][A-Za-z0-9-]*[A-Za-z0-9]|[A-Za-z]{2,}/g

/** Upstream `norm`: lowercase, then delete separator runs. */
function normaliseForMatch(s: string): string {
  return s.toLowerCase().replace(NORM_SEPARATORS, '')
}

export interface NumberToken {
  raw: string
  full: string
}

/** Upstream `extract_number_tokens`: numbers with a unit first, then bare numbers between word boundaries. */
export function extractNumberTokens(text: string): NumberToken[] {
  const tokens: NumberToken[] = []
  const unitStarts = new Set<number>()
  for (const m of text.matchAll(UNIT_TOKEN)) {
    unitStarts.add(m.index ?? 0)
    tokens.push({ raw: m[1]!, full: m[1]! + m[2]! })
  }
  for (const m of text.matchAll(PURE_TOKEN)) {
    const start = m.index ?? 0
    if (unitStarts.has(start)) continue
    if (UNIT_AFTER.test(text.slice(start + m[0].length))) continue
    tokens.push({ raw: m[1]!, full: m[1]! })
  }
  return tokens
}

/** Upstream `extract_english_words`: each word in its original case and lowercased. */
function extractEnglishWords(s: string): Set<string> {
  const words = new Set<string>()
  for (const m of s.matchAll(ENGLISH_WORD)) {
    if (m[0].length < 2) continue
    words.add(m[0])
    words.add(m[0].toLowerCase())
  }
  return words
}

/** What the exact-match bonus needs from the query, computed once per query. */
interface QueryMatchTerms {
  numbers: NumberToken[]
  /** Query English words in both cases; empty unless the query has a CJK character. */
  english: Set<string>
}

function queryMatchTerms(query: string): QueryMatchTerms {
  return { numbers: extractNumberTokens(query), english: CJK.test(query) ? extractEnglishWords(query) : new Set() }
}

/** Upstream `calculate_exact_match_bonus`: a value <= 0 to add to the score. */
function exactMatchBonus(query: string | QueryMatchTerms, text: string, cfg: EpisodicConfig): number {
  const q = typeof query === 'string' ? queryMatchTerms(query) : query
  let numberPart = 0
  if (q.numbers.length > 0) {
    const nodeTokens = extractNumberTokens(text)
    const matched = new Set<number>()
    q.numbers.forEach((qt, i) => {
      if (nodeTokens.some((nt) => nt.full.toLowerCase() === qt.full.toLowerCase())) {
        numberPart -= cfg.full_number_match_bonus
        matched.add(i)
      }
    })
    q.numbers.forEach((qt, i) => {
      if (matched.has(i)) return
      if (nodeTokens.some((nt) => nt.raw === qt.raw && nt.full.toLowerCase() !== qt.full.toLowerCase())) {
        numberPart -= cfg.partial_number_match_bonus
      }
    })
    numberPart = Math.max(numberPart, -2 * cfg.full_number_match_bonus)
  }

  let englishPart = 0
  if (q.english.size > 0) {
    const nodeLower = new Set([...extractEnglishWords(text)].map((w) => w.toLowerCase()))
    let count = 0
    // Both case variants of a capitalised query word count, kept as upstream.
    for (const w of q.english) if (nodeLower.has(w.toLowerCase())) count++
    englishPart = -Math.min(count * cfg.english_match_bonus, 2 * cfg.english_match_bonus)
  }
  return numberPart + englishPart
}

/**
 * Applies the keyword bonus, then the exact-match bonus, to every hit of every collection except the
 * RelationType one. Returns new hit lists; the input is not modified.
 *
 * Difference 2: the keyword bonus applies when every keyword term occurs in the hit's normalised text.
 */
export function applyBonuses(hits: CollectionHits, pre: PreprocessedQuery, cfg: EpisodicConfig): CollectionHits {
  const out: CollectionHits = {}
  const terms = pre.use_hybrid ? pre.keyword_terms.map(normaliseForMatch) : []
  const queryTerms = queryMatchTerms(pre.original)
  const exact = queryTerms.numbers.length > 0 || queryTerms.english.size > 0
  for (const [collection, list] of Object.entries(hits)) {
    if (collection === RELATION_COLLECTION) {
      out[collection] = list.map((h) => ({ ...h }))
      continue
    }
    out[collection] = list.map((hit): ScoredHit => {
      let score = hit.score
      if (terms.length > 0 && hit.text !== '') {
        const text = normaliseForMatch(hit.text)
        if (terms.every((t) => text.includes(t))) score = Math.max(0, score - cfg.keyword_match_bonus)
      }
      if (exact && score >= 0.1) {
        const bonus = exactMatchBonus(queryTerms, hit.text, cfg)
        if (bonus < 0) score = Math.max(0, score + bonus)
      }
      return { ...hit, score }
    })
  }
  return out
}
