/**
 * One document's contribution to the derived graph, from its chunks alone: a pure function of the chunks and the
 * options (the same input gives the same output, byte for byte), so that re-deriving a document replaces exactly what
 * it contributed before.
 */
import type { KgContributedEntity, KgContributedRelation } from '../providers/knowledge-graph/port.js'
import { markedTerms, plainText } from './marks.js'
import { frequentNgrams } from './ngrams.js'
import { nameKey } from './normalise.js'
import type { DerivationOptions } from './options.js'
import { relationsOf } from './relations.js'
import { mentionsOf, wholeTerms, type Mention } from './segment.js'
import { sentencesOf } from './sentences.js'

/** What derivation reads of a chunk. */
export interface DerivationChunk {
  id: string
  text: string
  title?: string
  metadata?: Record<string, unknown>
}

/** What a document contributes: the knowledge graph's own types (src/providers/knowledge-graph/port.ts). */
export type DerivedEntity = KgContributedEntity
type DerivedRelation = KgContributedRelation

export interface DocumentContribution {
  entities: DerivedEntity[]
  relations: DerivedRelation[]
}

/** Starts of a defining sentence right after the subject: `是`, `为`, `指`, `即`, an opening parenthesis. */
const DEFINES = /^\s*(?:是|为|指|即|系|[（(])/u

export function deriveDocument(chunks: readonly DerivationChunk[], options: DerivationOptions): DocumentContribution {
  const sentences = chunks.map((c) => sentencesOf(plainText(c.text)))
  const marked = wholeTerms([
    ...options.userDictionary,
    ...chunks.flatMap((c) => markedTerms([c.title ? `# ${c.title}` : '', ...headingPath(c).map((h) => `# ${h}`), c.text].join('\n'), options.maxNameLength))
  ])
  // the user's and the document's marked terms are matched first, so that where one overlaps an n-gram it wins
  const markedKeys = new Set(marked.map(nameKey))
  const whole = [...marked, ...wholeTerms(frequentNgrams(sentences.flat(), options)).filter((t) => !markedKeys.has(nameKey(t)))]
  const entities = new Map<string, DerivedEntity>()
  const relations = new Map<string, DerivedRelation>()
  for (const [i, chunk] of chunks.entries()) {
    for (const sentence of sentences[i]!) {
      const mentions = mentionsOf(sentence, whole, options)
      mentions.forEach((m, i) => noteEntity(entities, m, chunk.id, i === 0 ? definition(sentence, m, options) : undefined))
      for (const r of relationsOf(sentence, mentions, options)) {
        const key = `${r.source}\u0000${r.type}\u0000${r.target}`
        const relation = relations.get(key) ?? { ...r, chunk_ids: [], count: 0 }
        relation.count += 1
        if (!relation.chunk_ids.includes(chunk.id)) relation.chunk_ids.push(chunk.id)
        relations.set(key, relation)
      }
    }
  }
  return {
    entities: [...entities.values()].sort((a, b) => compare(a.key, b.key)),
    relations: [...relations.values()].sort((a, b) => compare(a.source, b.source) || compare(a.type, b.type) || compare(a.target, b.target))
  }
}

function noteEntity(entities: Map<string, DerivedEntity>, m: Mention, chunkId: string, description: string | undefined): void {
  let entity = entities.get(m.key)
  if (!entity) entities.set(m.key, (entity = { key: m.key, name: m.name, chunk_ids: [], mentions: 0 }))
  entity.mentions += 1
  if (!entity.chunk_ids.includes(chunkId)) entity.chunk_ids.push(chunkId)
  if (entity.type === undefined && m.type) entity.type = m.type
  if (entity.description === undefined && description) entity.description = description
}

/** The sentence, when it opens with the mention followed by a defining word. */
function definition(sentence: string, m: Mention, options: DerivationOptions): string | undefined {
  if (sentence.slice(0, m.start).trim() !== '' || !DEFINES.test(sentence.slice(m.end))) return undefined
  const chars = [...sentence]
  return chars.length <= options.maxDescriptionLength ? sentence : `${chars.slice(0, options.maxDescriptionLength - 1).join('')}…`
}

/** The chunk's heading path from its metadata (`heading_path`: a list, or one string joined by ` > `), if any. */
function headingPath(chunk: DerivationChunk): string[] {
  const path = chunk.metadata?.heading_path
  if (Array.isArray(path)) return path.filter((h): h is string => typeof h === 'string')
  if (typeof path === 'string') return path.split(/\s+>\s+/)
  return []
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
