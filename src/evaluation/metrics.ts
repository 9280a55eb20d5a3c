/**
 * Per-question metrics over one ranked answer, binary relevance:
 *
 * - Recall@k: targets found in the first k items / targets (`match: any`: 1 when one is found, else 0).
 * - MRR@10: 1 / rank of the first item that matches a target, 0 when none does within 10.
 * - nDCG@10: DCG = Σ_{r ≤ 10} g_r / log2(r + 1), g_r = 1 when item r finds a target no earlier item found
 *   (two chunks of one relevant document count once); divided by the ideal DCG, Σ_{i ≤ min(10, targets)} 1/log2(i + 1).
 */
import type { JudgedQuestion, TargetKind } from './judged-set.js'

/** What an item offers to be matched against: its id, source, text and the document ids it stands on. */
export interface JudgedItem {
  id: string
  source: string
  text: string
  mode: string
  metadata: Record<string, unknown>
}

export interface QuestionScore {
  recall: Record<number, number>
  mrr_at_10: number
  ndcg_at_10: number
  /** Rank (from 1) of the first item that matches a target, null when none does. */
  first_relevant_rank: number | null
}

const fold = (s: string) => s.normalize('NFKC').toLowerCase()
const docOfChunk = (chunkId: string) => (chunkId.lastIndexOf('#') === -1 ? chunkId : chunkId.slice(0, chunkId.lastIndexOf('#')))

/**
 * The document ids an item stands on: a hybrid chunk's `doc_id`, a graphrag item's source chunks' documents, the
 * documents of an item's evidence chunks (a derived Episode's sections).
 */
function documentsOf(item: JudgedItem): string[] {
  const docs: string[] = []
  if (typeof item.metadata.doc_id === 'string') docs.push(item.metadata.doc_id)
  const chunks = item.metadata.source_chunk_ids
  if (Array.isArray(chunks)) for (const c of chunks) if (typeof c === 'string') docs.push(docOfChunk(c))
  const evidence = item.metadata.evidence
  if (Array.isArray(evidence)) {
    for (const e of evidence) if (typeof e === 'object' && e !== null && typeof e.chunk_id === 'string') docs.push(docOfChunk(e.chunk_id))
  }
  return docs
}

/** The targets (as `kind:value` keys) an item matches. Answer strings match after NFKC folding and lower-casing. */
function matchedTargets(item: JudgedItem, q: Pick<JudgedQuestion, 'relevant'>): string[] {
  const out: string[] = []
  const r = q.relevant
  const add = (kind: TargetKind, value: string) => out.push(`${kind}:${value}`)
  for (const id of r.ids ?? []) if (item.id === id) add('ids', id)
  if (r.doc_ids?.length) {
    const docs = new Set(documentsOf(item))
    for (const d of r.doc_ids) if (docs.has(d)) add('doc_ids', d)
  }
  for (const s of r.sources ?? []) if (item.source === s) add('sources', s)
  if (r.answers?.length) {
    const text = fold(item.text)
    for (const a of r.answers) if (text.includes(fold(a))) add('answers', a)
  }
  return out
}

const targetCount = (q: Pick<JudgedQuestion, 'relevant' | 'match'>): number =>
  q.match === 'any' ? 1 : Object.values(q.relevant).reduce((n, list) => n + (list?.length ?? 0), 0)

/** Scores one ranked answer against one question; `ks` are the cut-offs of Recall@k. */
export function scoreQuestion(items: readonly JudgedItem[], q: Pick<JudgedQuestion, 'relevant' | 'match'>, ks: readonly number[]): QuestionScore {
  const n = targetCount(q)
  // With `any`, every target is the same one.
  const matches = items.map((item) => {
    const m = matchedTargets(item, q)
    return q.match === 'any' ? (m.length > 0 ? ['any'] : []) : m
  })
  const found = new Set<string>()
  const foundBy: number[] = [] // targets found by the first r items, r = index + 1
  const gains: number[] = []
  let first: number | null = null
  matches.forEach((m, i) => {
    let fresh = 0
    for (const t of m) if (!found.has(t)) { found.add(t); fresh++ }
    gains.push(fresh > 0 ? 1 : 0)
    foundBy.push(found.size)
    if (first === null && m.length > 0) first = i + 1
  })
  const recall: Record<number, number> = {}
  for (const k of ks) recall[k] = n === 0 ? 0 : (foundBy[Math.min(k, foundBy.length) - 1] ?? 0) / n
  let dcg = 0
  gains.slice(0, 10).forEach((g, i) => { dcg += g / Math.log2(i + 2) })
  let ideal = 0
  for (let i = 0; i < Math.min(10, n); i++) ideal += 1 / Math.log2(i + 2)
  const f = first as number | null
  return { recall, mrr_at_10: f !== null && f <= 10 ? 1 / f : 0, ndcg_at_10: ideal > 0 ? dcg / ideal : 0, first_relevant_rank: f }
}
