import { Type, type Static } from 'typebox'
import { LegReportSchema, ModeSchema } from './recall-bundle.js'

const LegHit = Type.Object({ rank: Type.Integer(), score: Type.Number() })

const RelationSchema = Type.Object({
  type: Type.String(),
  source: Type.String(),
  target: Type.String(),
  weight: Type.Optional(Type.Number()),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()]))
})

/**
 * The explanation of an item. Which fields appear depends on the mode (DESIGN section 3); every field is
 * declared here because a response schema serializes only declared fields.
 */
export const ItemMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  score_kind: Type.Union([Type.Literal('rrf'), Type.Literal('graph_match'), Type.Literal('bundle_cost')], {
    description: 'What `score` is: fused RRF score, graph match weight, or 1/(1+cost) of an episodic bundle.'
  }),
  // hybrid
  doc_id: Type.Optional(Type.String()),
  chunk_index: Type.Optional(Type.Integer()),
  title: Type.Optional(Type.String()),
  legs: Type.Optional(Type.Object({ vector: Type.Optional(LegHit), lexical: Type.Optional(LegHit) }, {
    description: 'Rank (from 1) and native score of the item in each leg that found it.'
  })),
  rrf: Type.Optional(Type.Object({
    k: Type.Number(),
    contributions: Type.Object({ vector: Type.Optional(Type.Number()), lexical: Type.Optional(Type.Number()) })
  }, { description: 'weight / (k + rank) added by each leg.' })),
  // graphrag
  entity_id: Type.Optional(Type.String()),
  entity_name: Type.Optional(Type.String()),
  entity_type: Type.Optional(Type.String()),
  matched_by: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('alias'), Type.Literal('keyword')])),
  matched_text: Type.Optional(Type.String()),
  hop: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })),
  via: Type.Optional(Type.String({ description: 'For a neighbour: the matched entity it was reached from.' })),
  relations: Type.Optional(Type.Array(RelationSchema)),
  source_chunk_ids: Type.Optional(Type.Array(Type.String())),
  // episodic
  cost: Type.Optional(Type.Number({ description: 'Bundle cost; lower is better.' })),
  best_path: Type.Optional(Type.String()),
  best_support_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  best_facet_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  best_point_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  best_entity_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  normalisation: Type.Optional(Type.Union([Type.Literal('query'), Type.Literal('collection')], {
    description: 'Episodic: the rule that turned vector distances into scores for this item: `query` (one min-max pool ' +
      'over every collection\'s hits, the default) or `collection` (m-flow\'s per-collection min-max).'
  })),
  episode_name: Type.Optional(Type.String())
}, { additionalProperties: true })

export const RecallItemSchema = Type.Object({
  id: Type.String(),
  text: Type.String(),
  score: Type.Number({ description: 'Higher is more relevant, in every mode.' }),
  source: Type.String(),
  mode: ModeSchema,
  metadata: ItemMetadataSchema
})

export const MatchStrengthSchema = Type.Union(
  [Type.Literal('strong'), Type.Literal('medium'), Type.Literal('weak'), Type.Literal('none')],
  { description: 'How far the items can be trusted as evidence; `none` means do not treat them as evidence.' }
)

export const RetrieveResponseSchema = Type.Object({
  mode: ModeSchema,
  query: Type.String(),
  recall_bundle: Type.Array(RecallItemSchema),
  legs: Type.Array(LegReportSchema),
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
  took_ms: Type.Number()
})
export type RetrieveResponse = Static<typeof RetrieveResponseSchema>
