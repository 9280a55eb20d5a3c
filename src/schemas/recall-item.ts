import { Type, type Static } from 'typebox'
import { RetrieveFilterSchema } from './filter.js'
import { ConvexExplanationSchema } from './fusion.js'
import { LegReportSchema, ModeSchema } from './recall-bundle.js'

const LegHit = Type.Object({
  rank: Type.Integer({ description: 'Rank of the chunk in this leg, from 1.' }),
  score: Type.Number({ description: 'The leg\'s own score: cosine similarity (vector) or BM25 score (lexical).' })
}, { description: 'Where this leg ranked the chunk; absent when the leg did not return it within its `window`.' })

const RelationSchema = Type.Object({
  type: Type.String({ description: 'Relation type, e.g. `负责`, `依赖`.' }),
  source: Type.String({ description: 'Id of the entity the relation starts from.' }),
  target: Type.String({ description: 'Id of the entity the relation points to.' }),
  weight: Type.Optional(Type.Number({ description: 'Relation weight as ingested; orders relations after those to other named entities.' })),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The relation\'s description, or null.' }))
}, { description: 'One relation adjacent to the entity.' })

/** The request's filter as echoed back (response and every item's metadata): the filter schema with its own description. */
const NormalisedFilter = (description: string) =>
  Type.Optional(Type.Unsafe<Static<typeof RetrieveFilterSchema>>({ ...RetrieveFilterSchema, description }))

/**
 * The explanation of an item. Which fields appear depends on the mode (DESIGN section 3); every field is
 * declared here because a response schema serializes only declared fields.
 */
export const ItemMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  filter: NormalisedFilter('The request\'s filter, normalised (lists sorted, times in UTC), when it had one: the item matched it.'),
  score_kind: Type.Union([Type.Literal('rrf'), Type.Literal('convex'), Type.Literal('graph_match'), Type.Literal('bundle_cost')], {
    description: 'What `score` is: fused RRF score, convex combination of normalised leg scores, graph match weight, or 1/(1+cost) of an episodic bundle.'
  }),
  // hybrid
  doc_id: Type.Optional(Type.String({ description: 'hybrid: id of the document the chunk belongs to.' })),
  chunk_index: Type.Optional(Type.Integer({ description: 'hybrid: position of the chunk in its document, from 0 (the chunk id is `<doc_id>#<chunk_index>`).' })),
  title: Type.Optional(Type.String({ description: 'hybrid: title of the document.' })),
  // Values of any JSON type here: the serializer would turn a list into a string under the ingest schema's list of types.
  doc_metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), {
    description: 'hybrid: the document\'s `metadata`, as ingested (strings, numbers, booleans, lists of strings).'
  })),
  legs: Type.Optional(Type.Object({ vector: Type.Optional(LegHit), lexical: Type.Optional(LegHit) }, {
    description: 'hybrid: rank (from 1) and native score of the item in each leg that found it.'
  })),
  rrf: Type.Optional(Type.Object({
    k: Type.Number({ description: 'The RRF constant k used (request option `rrf_k`, default 60).' }),
    contributions: Type.Object({
      vector: Type.Optional(Type.Number({ description: 'weight / (k + vector rank); absent when the vector leg did not find the chunk.' })),
      lexical: Type.Optional(Type.Number({ description: 'weight / (k + lexical rank); absent when the lexical leg did not find the chunk.' }))
    }, { description: 'What each leg added to `score`, which is their sum.' })
  }, { description: 'hybrid: the Reciprocal Rank Fusion behind `score`.' })),
  convex: Type.Optional(ConvexExplanationSchema),
  // graphrag
  entity_id: Type.Optional(Type.String({ description: 'graphrag: id of the entity (also the item `id`).' })),
  entity_name: Type.Optional(Type.String({ description: 'graphrag: the entity\'s name.' })),
  entity_type: Type.Optional(Type.String({ description: 'graphrag: the entity\'s type, when it has one.' })),
  matched_by: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('alias'), Type.Literal('keyword')], {
    description: 'graphrag: how the question reached the entity: its `name` or an `alias` occurs in the question, or the keyword fallback.'
  })),
  matched_text: Type.Optional(Type.String({ description: 'graphrag: the words of the question that matched.' })),
  hop: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: 'graphrag: 0 for an entity the question names, 1 for a neighbour reached through a relation.' })),
  via: Type.Optional(Type.String({ description: 'graphrag, for a neighbour: the matched entity it was reached from.' })),
  relations: Type.Optional(Type.Array(RelationSchema, { description: 'graphrag: the entity\'s one-hop relations shown, relations to other named entities first (at most `max_relations`).' })),
  source_chunk_ids: Type.Optional(Type.Array(Type.String(), { description: 'graphrag: ids of the document chunks that name the entity (its evidence in the hybrid corpus).' })),
  // episodic
  cost: Type.Optional(Type.Number({ description: 'episodic: bundle cost of the Episode\'s best path; lower is better (`score` = 1 / (1 + cost)).' })),
  best_path: Type.Optional(Type.String({ description: 'episodic: the kind of path that won: `direct_episode`, `facet`, `point`, `entity` or `facet_entity`.' })),
  best_support_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the node whose vector hit supports the winning path (its evidence).' })),
  best_facet_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the Facet on the winning path, or null.' })),
  best_point_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the FacetPoint on the winning path, or null.' })),
  best_entity_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the Entity on the winning path, or null.' })),
  episode_name: Type.Optional(Type.String({ description: 'episodic: the Episode\'s name.' })),
  normalisation: Type.Optional(Type.Union([Type.Literal('query'), Type.Literal('collection')], {
    description: 'episodic: the rule that turned vector distances into scores for this item: `query` (one min-max pool ' +
      'over every collection\'s hits, the default) or `collection` (m-flow\'s per-collection min-max).'
  })),
  support_similarity: Type.Optional(Type.Union([Type.Number(), Type.Null()], {
    description: 'episodic: raw cosine similarity of the question to `best_support_id`, before normalisation (decides `match_strength`).'
  })),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the Episode\'s name.' })),
  time: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: the Episode\'s time as shown in its text.' })),
  mentioned_time_start: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: start of the time the Episode is about (ISO 8601), or null.' })),
  mentioned_time_end: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: end of the time the Episode is about (ISO 8601), or null.' })),
  created_at: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'episodic: when the Episode was recorded (ISO 8601), or null.' })),
  display_mode: Type.Optional(Type.String({ description: 'episodic: how `text` was rendered: `summary`, `highly_related_summary` or `detail`.' })),
  edges: Type.Optional(Type.Array(Type.Object({
    episode_id: Type.Optional(Type.String({ description: 'The Episode the edge explains.' })),
    from: Type.Optional(Type.String({ description: 'Node the edge starts from.' })),
    to: Type.Optional(Type.String({ description: 'Node the edge points to.' })),
    relationship_name: Type.Optional(Type.String({ description: 'Edge type, e.g. `has_facet`.' })),
    edge_text: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The edge\'s text, as searched in the relation collection.' })),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'For an Episode–Entity edge: what the entity is or did in this Episode (its per-Episode description), else null.' })),
    sort_score: Type.Optional(Type.Number({ description: 'The key that ordered the edge.' }))
  }), { description: 'episodic, `display_mode: detail` only: the edges that explain the Episode.' })),
  query: Type.Optional(Type.Object({
    vector_query: Type.Optional(Type.String({ description: 'The question as embedded, after time words were removed.' })),
    keyword_terms: Type.Optional(Type.Array(Type.String(), { description: 'Terms that earn the keyword bonus (empty when hybrid search is off for this question).' })),
    hybrid_reason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Why keyword matching was switched on, or null.' })),
    time_range: Type.Optional(Type.Union([Type.Object({
      start: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Start (ISO 8601).' })),
      end: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'End (ISO 8601).' })),
      confidence: Type.Optional(Type.Number({ description: 'How sure the parser is, 0..1.' }))
    }), Type.Null()], { description: 'The time the question refers to, or null.' })),
    vector_limit: Type.Optional(Type.Integer({ description: 'Hits fetched per collection.' }))
  }, { additionalProperties: true, description: 'episodic: how the question was read (the same for every item).' }))
}, { additionalProperties: true, description: 'Why the item is here. Which fields appear depends on the mode (each field says which).' })

export const RecallItemSchema = Type.Object({
  id: Type.String({ description: 'A chunk id `<doc id>#<index>` (hybrid), an entity id (graphrag) or an Episode id (episodic).' }),
  text: Type.String({ description: 'The text to hand to generation: the chunk, the entity with its relations, or the rendered Episode.' }),
  score: Type.Number({ description: 'Higher is more relevant, in every mode.' }),
  source: Type.String({ description: 'Where the text came from: a document path, the entity\'s source (or `graph:entity/<id>`), or `episode:<id>`.' }),
  mode: ModeSchema,
  metadata: ItemMetadataSchema
}, { description: 'One item of the recall bundle.' })

export const MatchStrengthSchema = Type.Union(
  [Type.Literal('strong'), Type.Literal('medium'), Type.Literal('weak'), Type.Literal('none')],
  { description: 'How far the items can be trusted as evidence; `none` means do not treat them as evidence.' }
)

export const RetrieveResponseSchema = Type.Object({
  mode: ModeSchema,
  query: Type.String({ description: 'The question, as asked.' }),
  namespace: Type.String({ description: 'The namespace searched.' }),
  filter: NormalisedFilter(
    'The request\'s filter, normalised (lists sorted and without repeats, times in UTC ISO form), when it had one; also in every item\'s `metadata.filter`.'
  ),
  recall_bundle: Type.Array(RecallItemSchema, { description: 'The items, best first, at most `top_k`.' }),
  legs: Type.Array(LegReportSchema, { description: 'One entry per backend step the mode ran (embedding, vector, lexical, graph), in order.' }),
  match_strength: MatchStrengthSchema,
  tie: Type.Optional(Type.Object({
    ids: Type.Array(Type.String(), { description: 'Every returned item tied with the first, in the returned order.' }),
    value: Type.Number({ description: 'The score they share in the mode\'s own figure (episodic: the bundle cost).' }),
    ordered_by: Type.Literal('id', { description: 'They are ordered by id, which says nothing about relevance.' })
  }, {
    description: 'Present only when the first two items tie (episodic: equal bundle costs, ordered by Episode id, ' +
      'spec difference 1). `match_strength` is then at most `medium`.'
  })),
  cached: Type.Boolean({ description: 'Whether this answer came from the response cache.' }),
  took_ms: Type.Number({ description: 'Wall time of the request in the service, in milliseconds.' })
})
export type RetrieveResponse = Static<typeof RetrieveResponseSchema>
