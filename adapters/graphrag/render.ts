/**
 * Turning candidates into recall-bundle items: the text a generator reads (the entity line, then one line
 * per relation, `A -[type]-> B: description`) and the metadata a person reads in Swagger UI.
 */
import type { KgEntity, KgRelation } from '../../src/providers/knowledge-graph/port.js'
import type { RecallItem } from '../types.js'
import type { GraphragMetadata } from './spec.js'
import type { ShownCandidate } from './expand.js'
import { evidenceOf } from './evidence.js'
import { NO_SUPPORT, type ChunkSupport } from './support.js'

/** `name [type] (aliases: a, b): description`, each part only when present. */
function renderEntityLine(entity: KgEntity): string {
  let line = entity.name
  if (entity.type) line += ` [${entity.type}]`
  if (entity.aliases.length > 0) line += ` (aliases: ${entity.aliases.join(', ')})`
  if (entity.description) line += `: ${entity.description}`
  return line
}

/** `A -[type]-> B: description`, with entity names where known, ids otherwise. */
function renderRelationLine(relation: KgRelation, nameOf: (id: string) => string): string {
  const line = `${nameOf(relation.source)} -[${relation.type}]-> ${nameOf(relation.target)}`
  return relation.description ? `${line}: ${relation.description}` : line
}

/** The recall item of a candidate at `rank` (from 1); `support` orders its evidence (`support.ts`). */
export function renderItem(
  candidate: ShownCandidate, rank: number, nameOf: (id: string) => string, maxEvidence: number, support: ChunkSupport = NO_SUPPORT
): RecallItem<GraphragMetadata, 'graphrag'> {
  const { entity } = candidate
  const lines = [renderEntityLine(entity), ...candidate.relations.map((r) => renderRelationLine(r, nameOf))]
  return {
    id: entity.id,
    text: lines.join('\n'),
    score: candidate.score,
    source: entity.source ?? `graph:entity/${entity.id}`,
    mode: 'graphrag',
    metadata: {
      rank,
      score_kind: 'graph_match',
      entity_id: entity.id,
      entity_name: entity.name,
      matched_by: candidate.matchedBy,
      hop: candidate.hop,
      ...(candidate.meaning && candidate.hop === 0 ? { similarity: candidate.meaning.similarity, meaning_text: candidate.meaning.text } : {}),
      relations: candidate.relations.map((r) => ({
        type: r.type,
        source: r.source,
        target: r.target,
        description: r.description ?? null
      })),
      source_chunk_ids: [...entity.source_chunk_ids],
      derived: entity.derived_from !== undefined,
      evidence: evidenceOf(candidate, maxEvidence, support)
    }
  }
}
