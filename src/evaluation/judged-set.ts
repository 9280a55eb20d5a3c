/**
 * A judged question set, one JSON object a line (JSONL):
 *
 *   {"id": "q1", "query": "…", "relevant": {"ids": […], "doc_ids": […], "sources": […], "answers": […]}, "match": "all"}
 *
 * `relevant` names the targets, each list optional but at least one target in all: an item's `id`; a
 * document id (a hybrid chunk's `metadata.doc_id`, a graphrag item's `source_chunk_ids` documents); an
 * item `source` (a document path, `graph:entity/<id>`, `episode:<id>`); or an answer string the item's text
 * must contain. `match: "all"` (default) counts every target (Recall = targets found / targets);
 * `match: "any"` makes the targets alternatives (one found is full recall), so one set can judge every mode.
 */

const TARGET_KINDS = ['ids', 'doc_ids', 'sources', 'answers'] as const
export type TargetKind = (typeof TARGET_KINDS)[number]

export interface JudgedQuestion {
  /** The line's `id`, else `line-<n>`. */
  id: string
  /** Line number in the set, from 1. */
  line: number
  query: string
  relevant: Partial<Record<TargetKind, string[]>>
  match: 'all' | 'any'
}

/** A line of the set is not a judged question; `line` from 1, `field` the JSON path within it. */
export class JudgedSetError extends Error {
  constructor(readonly line: number, readonly field: string, problem: string) {
    super(`judged set line ${line}: ${field} ${problem}`)
  }
}

const LINE_FIELDS = new Set(['id', 'query', 'relevant', 'match'])

/** Parses every line (blank lines skipped) or throws for the first bad one, so that nothing is evaluated. */
export function parseJudgedSet(text: string): JudgedQuestion[] {
  const questions: JudgedQuestion[] = []
  const ids = new Map<string, number>()
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1
    if (raw.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(raw)
    } catch (error) {
      throw new JudgedSetError(line, '(line)', `is not JSON: ${(error as Error).message}`)
    }
    const q = parseQuestion(value, line)
    const first = ids.get(q.id)
    if (first !== undefined) throw new JudgedSetError(line, 'id', `${JSON.stringify(q.id)} is already the id of line ${first}`)
    ids.set(q.id, line)
    questions.push(q)
  })
  return questions
}

function parseQuestion(value: unknown, line: number): JudgedQuestion {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JudgedSetError(line, '(line)', 'is not a JSON object')
  const o = value as Record<string, unknown>
  const unknown = Object.keys(o).filter((k) => !LINE_FIELDS.has(k))
  if (unknown.length > 0) throw new JudgedSetError(line, unknown[0]!, `is not a field of a judged question (allowed: ${[...LINE_FIELDS].join(', ')})`)
  if (typeof o.query !== 'string' || o.query.trim() === '') throw new JudgedSetError(line, 'query', 'must be a non-blank string')
  if (o.id !== undefined && (typeof o.id !== 'string' || o.id === '')) throw new JudgedSetError(line, 'id', 'must be a non-empty string')
  if (o.match !== undefined && o.match !== 'all' && o.match !== 'any') throw new JudgedSetError(line, 'match', `is ${JSON.stringify(o.match)}; allowed: all, any`)
  const r = o.relevant
  if (typeof r !== 'object' || r === null || Array.isArray(r)) throw new JudgedSetError(line, 'relevant', `must be an object with some of ${TARGET_KINDS.join(', ')}`)
  const relevant: Partial<Record<TargetKind, string[]>> = {}
  let targets = 0
  for (const [kind, list] of Object.entries(r as Record<string, unknown>)) {
    if (!(TARGET_KINDS as readonly string[]).includes(kind)) throw new JudgedSetError(line, `relevant.${kind}`, `is not a kind of target (allowed: ${TARGET_KINDS.join(', ')})`)
    if (!Array.isArray(list) || list.some((x) => typeof x !== 'string' || x === '')) {
      throw new JudgedSetError(line, `relevant.${kind}`, 'must be a list of non-empty strings')
    }
    relevant[kind as TargetKind] = [...new Set(list as string[])]
    targets += list.length
  }
  if (targets === 0) throw new JudgedSetError(line, 'relevant', 'names no target')
  return { id: (o.id as string | undefined) ?? `line-${line}`, line, query: o.query, relevant, match: (o.match as 'all' | 'any' | undefined) ?? 'all' }
}
