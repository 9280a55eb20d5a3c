/**
 * What `mode=graphrag` publishes: its request option, its part of the filter, its item metadata and its leg.
 * The service's request and response schemas are composed from these (src/modes.ts).
 */
import { Type, type Static } from 'typebox'
import type { LegSpec } from '../leg-runner.js'

/** The graphrag option of `POST /retrieve` (and of a compare arm). */
export const graphragOptions = {
  max_relations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Relations shown per graphrag item, default 10.' }))
}

/** Graphrag's part of the request `filter`. */
export const graphragFilter = {
  entity_types: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
    minItems: 1, maxItems: 100, description: 'graphrag: only entities of these types are items (entities of other types still lead to their neighbours).'
  }))
}

const RelationSchema = Type.Object({
  type: Type.String({ description: 'Relation type, e.g. `负责`, `依赖`.' }),
  source: Type.String({ description: 'Id of the entity the relation starts from.' }),
  target: Type.String({ description: 'Id of the entity the relation points to.' }),
  description: Type.Union([Type.String(), Type.Null()], { description: 'The relation\'s description, or null.' })
}, { description: 'One relation adjacent to the entity.' })

/** The explanation of a graphrag item. */
export const GraphragMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  score_kind: Type.Literal('graph_match'),
  entity_id: Type.String({ description: 'graphrag: id of the entity (also the item `id`).' }),
  entity_name: Type.String({ description: 'graphrag: the entity\'s name.' }),
  matched_by: Type.Union([Type.Literal('name'), Type.Literal('alias'), Type.Literal('partial'), Type.Literal('meaning'), Type.Literal('keyword'), Type.Literal('evidence')], {
    description: 'graphrag: how the question reached the entity: its `name` or an `alias` occurs in the question, the question holds a large part of it (`partial`: `流式返回` of `流式返回接口`), a name or alias is among the nearest the question by its vector, at least `GRAPHRAG_MEANING_FLOOR` similar (`meaning`: 住得比标准贵 → 住宿超标; `similarity` says how near; after the names the question holds; docs/derivation.md, "Entities found by meaning"), the keyword fallback over names and descriptions (`keyword`, score at most 0.45), or, on a derived graph when neither finds anything, the chunks best matching the question lexically whose derived entities these are (`evidence`, score at most 0.3; docs/derivation.md, "When nothing is named").'
  }),
  hop: Type.Integer({ minimum: 0, maximum: 1, description: 'graphrag: 0 for an entity the question names, 1 for a neighbour reached through a relation.' }),
  similarity: Type.Optional(Type.Number({ description: 'graphrag, `matched_by: meaning` at hop 0: the cosine similarity of the question (embedded as a query) and the entity\'s nearest name or alias; the score is 0.6 + 0.4 × similarity.' })),
  meaning_text: Type.Optional(Type.String({ description: 'graphrag, `matched_by: meaning` at hop 0: the name or alias (normalised) the question is near.' })),
  relations: Type.Array(RelationSchema, { description: 'graphrag: the entity\'s one-hop relations shown, relations to other named entities first (at most `max_relations`).' }),
  source_chunk_ids: Type.Array(Type.String(), { description: 'graphrag: ids of the document chunks that name the entity (its evidence in the hybrid corpus).' }),
  derived: Type.Boolean({ description: 'graphrag: `true` for an entity derived from the namespace\'s documents (docs/derivation.md), `false` for an imported one.' }),
  evidence: Type.Array(Type.Object({
    chunk_id: Type.String({ description: 'A chunk of the namespace that names the entity.' }),
    weight: Type.Number({ description: 'The item\'s score over √n for the n-th evidence chunk.' })
  }), { description: 'graphrag: the entity\'s evidence chunks, those stating a relation shown first, at most 5, weighted score/√n (docs/derivation.md, "Grounded answers").' })
})
export type GraphragMetadata = Static<typeof GraphragMetadataSchema>

/** One leg, `graph`; the mode has no other source, so its failure fails the request (503 naming the store). */
export const GRAPHRAG_LEGS = {
  graph: { backend: 'graph', timeout: 'graph', onFailure: 'fail' }
} as const satisfies Record<string, LegSpec>

export const GRAPHRAG_STARTUP = ['knowledge-graph', 'demo:graph', 'graphrag:names'] as const
