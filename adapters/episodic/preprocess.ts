/**
 * Query preprocessing (m-flow `preprocess_query`; docs/episodic.md, "The pipeline, step by step"): time stripping, the vector query,
 * the hybrid reason and the keyword. Difference 2: the keyword is kept as a list of terms.
 */
import type { EpisodicConfig } from './config.js'
import { parseQueryTime } from './time-parse.js'
import type { HybridReason, PreprocessedQuery, QueryTime } from './types.js'

/** Removed from the vector query, in this order (plain substring replacement, as upstream). */
const STRIP_LIST: readonly string[] = [
  '是什么', '是啥', '什么是', '啥是', '怎么做', '怎样做', '如何做', '为什么', '为啥', '怎么', '怎样', '如何', '吗', '呢', '？', '?'
]

/** Kept in the vector query but removed for the keyword and the core length. */
const KEEP_LIST: readonly string[] = [
  '多少', '几个', '几条', '几项', '哪些', '哪个', '哪里', '哪儿', '多久', '多长', '多大', '多高', '什么时候', '何时'
]

const CJK = /[\u4e00-\u9fff]/u
const ASCII_LETTER = /[A-Za-z]/
const DIGIT = /\p{Nd}/u
const CORE_SEPARATORS = /[\s，,。.；;：:！!]+/gu
const KEYWORD_SEPARATORS = /[\s，,。.；;：:！!？?、]+/gu
const NUMBER_KEYWORD = /\p{Nd}+\.?\p{Nd}*[%％]?[万亿千百十个元块美金日月年周天小时分秒倍次条台件套人名位家批轮期季度]*/gu
const ENGLISH_KEYWORD = /[A-Za-z][A-Za-z0-9]*/g

function removeAll(text: string, words: readonly string[]): string {
  let out = text
  for (const w of words) out = out.split(w).join('')
  return out
}

/** Python's `str.strip()` with no argument: Unicode whitespace at both ends. */
function pyStrip(s: string): string {
  return s.replace(/^\s+|\s+$/gu, '')
}

/** Upstream `_strip_question_words_for_vector`. */
function stripQuestionWordsForVector(q: string): string {
  return pyStrip(removeAll(q, STRIP_LIST))
}

/** Upstream `_get_hybrid_search_reason`: the first matching rule wins. */
function hybridReason(q: string, threshold: number): HybridReason {
  if (CJK.test(q) && ASCII_LETTER.test(q)) return 'mixed_lang'
  if (DIGIT.test(q)) return 'number'
  const core = removeAll(removeAll(q, STRIP_LIST), KEEP_LIST).replace(CORE_SEPARATORS, '')
  return [...core].length <= threshold ? 'short_query' : null
}

/** Upstream `_extract_keyword_by_reason`, returning the terms upstream concatenates. */
function extractKeywordTerms(q: string, reason: HybridReason): string[] {
  const base = pyStrip(removeAll(removeAll(q, STRIP_LIST), KEEP_LIST)).replace(KEYWORD_SEPARATORS, '')
  const fallback = base === '' ? [] : [base]
  if (reason === 'number') {
    const terms = [...q.matchAll(NUMBER_KEYWORD)].map((m) => m[0])
    return terms.length > 0 ? terms : fallback
  }
  if (reason === 'mixed_lang') {
    const terms = [...q.matchAll(ENGLISH_KEYWORD)].map((m) => m[0])
    return terms.length > 0 ? terms : fallback
  }
  return fallback
}

/**
 * Preprocesses a query.
 *
 * @param nowMs the clock for relative times, epoch ms
 */
export function preprocessQuery(query: string, cfg: EpisodicConfig, nowMs: number): PreprocessedQuery {
  let timeInfo: QueryTime | null = null
  let q = query
  if (cfg.enable_time_bonus) {
    timeInfo = parseQueryTime(query, nowMs, cfg.tz_offset_hours)
    q = timeInfo.query_wo_time !== '' ? timeInfo.query_wo_time : query
  }
  const stripped = stripQuestionWordsForVector(q)
  const vectorQuery = stripped !== '' ? stripped : q !== '' ? q : query
  const reason = hybridReason(q, cfg.hybrid_threshold)
  const terms = extractKeywordTerms(q, reason)
  return {
    original: query,
    vector_query: vectorQuery,
    keyword_terms: terms,
    keyword: terms.join(''),
    hybrid_reason: reason,
    use_hybrid: cfg.enable_hybrid_search && reason !== null,
    time_info: timeInfo
  }
}
