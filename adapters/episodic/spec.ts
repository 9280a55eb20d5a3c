/**
 * What `mode=episodic` publishes: its options, its part of the filter, its item metadata and its legs.
 * The service's request and response schemas are composed from these (src/modes.ts).
 */
import { Type, type Static, type TSchema } from 'typebox'
import type { LegSpec } from '../leg-runner.js'
import { episodicOptionProperties } from './config.js'

/** The episodic options of `POST /retrieve` (and of a compare arm), under one key. */
export const episodicOptions = {
  episodic: Type.Optional(Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: false,
    properties: episodicOptionProperties(),
    description: 'Episodic options: `display_mode`, `normalisation` (`query`, the default, or m-flow\'s `collection`) and ' +
      'per-request overrides of the tuning constants (m-flow\'s defaults otherwise; each property gives its range and default).'
  }))
}

const TimeRangeSchema = Type.Object({
  start: Type.Optional(Type.String({ description: 'ISO 8601; the range starts here (inclusive). Absent: unbounded.' })),
  end: Type.Optional(Type.String({ description: 'ISO 8601; the range ends here (inclusive). Absent: unbounded.' }))
}, {
  additionalProperties: false, minProperties: 1,
  description: 'episodic: only Episodes whose mentioned time overlaps this range (closed intervals: an Episode from s to e ' +
    'overlaps [start, end] when s <= end and e >= start; an Episode with only a start or an end is that instant); Episodes ' +
    'without a mentioned time are left out.'
})

/** Episodic's part of the request `filter`. */
export const episodicFilter = { time_range: Type.Optional(TimeRangeSchema) }

const Nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description })

/** The explanation of an episodic item. */
export const EpisodicMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  score_kind: Type.Literal('bundle_cost'),
  cost: Type.Number({ description: 'episodic: bundle cost of the Episode\'s best path; lower is better (`score` = 1 / (1 + cost)).' }),
  best_path: Type.String({ description: 'episodic: the kind of path that won: `direct_episode`, `facet`, `point`, `entity` or `facet_entity`.' }),
  best_support_id: Nullable(Type.String(), 'episodic: the node whose vector hit supports the winning path (its evidence).'),
  best_facet_id: Nullable(Type.String(), 'episodic: the Facet on the winning path, or null.'),
  best_point_id: Nullable(Type.String(), 'episodic: the FacetPoint on the winning path, or null.'),
  best_entity_id: Nullable(Type.String(), 'episodic: the Entity on the winning path, or null.'),
  normalisation: Type.Union([Type.Literal('query'), Type.Literal('collection')], {
    description: 'episodic: the rule that turned vector distances into scores for this item: `query` (one min-max pool ' +
      'over every collection\'s hits, the default) or `collection` (m-flow\'s per-collection min-max).'
  }),
  support_similarity: Nullable(Type.Number(), 'episodic: raw cosine similarity of the question to `best_support_id`, before normalisation (decides `match_strength`).'),
  name: Nullable(Type.String(), 'episodic: the Episode\'s name.'),
  time: Nullable(Type.String(), 'episodic: the Episode\'s time as shown in its text.'),
  mentioned_time_start: Nullable(Type.String(), 'episodic: start of the time the Episode is about (ISO 8601), or null.'),
  mentioned_time_end: Nullable(Type.String(), 'episodic: end of the time the Episode is about (ISO 8601), or null.'),
  created_at: Nullable(Type.String(), 'episodic: when the Episode was recorded (ISO 8601), or null.'),
  display_mode: Type.String({ description: 'episodic: how `text` was rendered: `summary`, `highly_related_summary` or `detail`.' }),
  derived: Type.Boolean({ description: 'episodic: `true` for an Episode derived from the namespace\'s documents (docs/derivation.md, "Derived Episodes"), `false` for an imported one.' }),
  evidence: Type.Array(Type.Object({
    chunk_id: Type.String({ description: 'A chunk of the namespace the Episode rests on.' }),
    heading_path: Type.Array(Type.String(), { description: 'The headings above the chunk in its document, outermost first.' }),
    weight: Type.Number({ description: 'The item\'s score over √n for the n-th evidence chunk.' })
  }), { description: 'episodic: a derived Episode\'s document sections, the winning FacetPoint\'s and Facet\'s chunk first, at most 5, weighted score/√n; empty for an imported Episode.' }),
  turns: Type.Optional(Type.Array(Type.Object({
    id: Type.String({ description: 'The turn id as sent.' }),
    speaker: Type.String({ description: 'Who said it.' }),
    time: Type.String({ description: 'When, as sent (the turn\'s own time, else its session\'s).' }),
    text: Type.String({ description: 'What was said.' })
  }), { description: 'episodic, a conversation session\'s Episode only (docs/conversations.md, "Reading"): the turns it rests on, best first (its best turn by cosine and BM25, then those scoring at least the answer\'s 10th best turn with their neighbours\' and the question time\'s share), at most 10.' })),
  edges: Type.Optional(Type.Array(Type.Object({
    episode_id: Type.Optional(Type.String({ description: 'The Episode the edge explains.' })),
    from: Type.Optional(Type.String({ description: 'Node the edge starts from.' })),
    to: Type.Optional(Type.String({ description: 'Node the edge points to.' })),
    relationship_name: Type.Optional(Type.String({ description: 'Edge type, e.g. `has_facet`.' })),
    edge_text: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The edge\'s text, as searched in the relation collection.' })),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'For an Episode–Entity edge: what the entity is or did in this Episode (its per-Episode description), else null.' })),
    sort_score: Type.Optional(Type.Number({ description: 'The key that ordered the edge.' }))
  }), { description: 'episodic, `display_mode: detail` only: the edges that explain the Episode.' })),
  query: Type.Object({
    vector_query: Type.String({ description: 'The question as embedded, after time words were removed.' }),
    keyword_terms: Type.Array(Type.String(), { description: 'Terms that earn the keyword bonus (empty when hybrid search is off for this question).' }),
    hybrid_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why keyword matching was switched on, or null.' }),
    time_range: Type.Union([Type.Object({
      start: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Start (ISO 8601).' })),
      end: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'End (ISO 8601).' })),
      confidence: Type.Optional(Type.Number({ description: 'How sure the parser is, 0..1.' }))
    }), Type.Null()], { description: 'The time the question refers to, or null.' }),
    vector_limit: Type.Integer({ description: 'Hits fetched per collection.' })
  }, { additionalProperties: true, description: 'episodic: how the question was read (the same for every item).' })
})
export type EpisodicMetadata = Static<typeof EpisodicMetadataSchema>

/** Every step is needed for a bundle cost: a failed or slow step fails the request (503 naming the backend). */
export const EPISODIC_LEGS = {
  time_range: { backend: 'episodes', timeout: 'graph', onFailure: 'fail' },
  embedding: { backend: 'embedder', timeout: 'embedding', onFailure: 'fail' },
  vector: { backend: 'vectors', timeout: 'vector', onFailure: 'fail' },
  graph: { backend: 'episodes', timeout: 'graph', onFailure: 'fail' }
} as const satisfies Record<string, LegSpec>

export const EPISODIC_STARTUP = ['embedder', 'episodic:stores', 'demo:episodes'] as const
