import { Type, type Static } from 'typebox'
import { NamespaceSchema, TopKSchema } from './common.js'
import { ErrorSchema } from './error.js'
import { MinGenerationSchema } from './generation.js'
import { MatchStrengthSchema, RetrieveResponseSchema } from './recall-item.js'
import { ModeSchema } from './recall-bundle.js'
import { RetrieveBodySchema } from './retrieve.js'

/**
 * One arm: a `POST /retrieve` body without the question and `top_k`, which the arms share. Derived from
 * the retrieve body, so every option `/retrieve` takes an arm takes too.
 */
export const CompareArmSchema = Type.Omit(RetrieveBodySchema, ['query', 'top_k'], {
  additionalProperties: false,
  description: 'A `POST /retrieve` body without `query` and `top_k`: a `mode` and, optionally, that mode\'s options, its ' +
    '`filter`, and its own `namespace` (else the comparison\'s).'
})
export type CompareArm = Static<typeof CompareArmSchema>

const Query = RetrieveBodySchema.properties.query

const ComparedNamespace = Type.String({
  ...NamespaceSchema,
  description: 'The namespace of every arm that names none of its own (default `default`); an arm\'s own `namespace` wins, so ' +
    'two arms may ask two namespaces the same question. A key scoped to namespaces must allow every namespace an arm uses.'
})

const ComparedMinGeneration = Type.Integer({
  ...MinGenerationSchema,
  description: `${(MinGenerationSchema as { description?: string }).description ?? ''} Applies to every arm that names none of its own; an arm that does not see it in time makes the whole comparison 503.`
})

export const CompareBodySchema = Type.Object({
  query: Query,
  top_k: Type.Optional(TopKSchema),
  namespace: Type.Optional(ComparedNamespace),
  min_generation: Type.Optional(ComparedMinGeneration),
  arms: Type.Array(CompareArmSchema, {
    minItems: 2,
    maxItems: 3,
    description: 'Two or three arms, each run as its own `/retrieve` request on the same question, concurrently. ' +
      'Arms may share a mode with different options; two identical arms are refused.'
  })
}, { additionalProperties: false })
export type CompareBody = Static<typeof CompareBodySchema>

export const CompareQuerySchema = Type.Object({
  q: RetrieveBodySchema.properties.query,
  modes: Type.String({
    minLength: 1,
    description: 'Two or three different modes, comma-separated (`hybrid,episodic`); each runs with its default options. ' +
      'POST takes per-arm options.'
  }),
  top_k: Type.Optional(TopKSchema),
  namespace: Type.Optional(ComparedNamespace),
  min_generation: Type.Optional(ComparedMinGeneration)
}, { additionalProperties: false })

const ArmAnswerSchema = Type.Object({
  arm: Type.Integer({ minimum: 0, description: 'Index of the arm in the request, from 0.' }),
  mode: ModeSchema,
  response: Type.Optional(Type.Unsafe<Static<typeof RetrieveResponseSchema>>({
    ...RetrieveResponseSchema,
    description: 'The arm\'s answer, exactly as `POST /retrieve` gives it for the same request. Absent when the arm failed.'
  })),
  error: Type.Optional(Type.Unsafe<Static<typeof ErrorSchema>>({
    ...ErrorSchema,
    description: 'Why the arm failed, in the error shape `/retrieve` would have answered with (e.g. a 503 naming the backend). ' +
      'Absent when the arm answered.'
  })),
  evidence: Type.Optional(Type.Array(Type.String(), {
    description: 'The arm\'s evidence ids in rank order, each once: a hybrid item\'s own chunk id; a graphrag item\'s ' +
      '`metadata.source_chunk_ids`; an Episode\'s `source` (`episode:<id>`), since Episodes carry no chunk lineage. ' +
      '`common_evidence` and `evidence_rbo` are computed over these lists. Absent when the arm failed.'
  }))
}, { description: 'One arm\'s outcome: `response` and `evidence`, or `error`.' })

const Ratio = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description })

const PairComparisonSchema = Type.Object({
  arms: Type.Array(Type.Integer({ minimum: 0 }), {
    minItems: 2, maxItems: 2, description: 'The two arms compared, by index (`[a, b]`, a < b); the pairs below refer to them in this order.'
  }),
  common_ids: Type.Array(Type.String(), {
    description: 'Item `id`s found in both bundles, in arm a\'s rank order. Ids of different modes are different kinds of thing ' +
      '(chunk, entity, Episode), so across modes this is usually empty: compare evidence instead.'
  }),
  common_evidence: Type.Array(Type.String(), {
    description: 'Evidence ids (see `arms[].evidence`: chunk ids, or `episode:<id>`) cited by both bundles, in arm a\'s order.'
  }),
  common_sources: Type.Array(Type.String(), {
    description: 'Item `source`s (document paths, `graph:entity/<id>`, `episode:<id>`) present in both bundles, in arm a\'s order.'
  }),
  sources_jaccard: Ratio('Jaccard index |A ∩ B| / |A ∪ B| of the two bundles\' sets of distinct item `source`s; ' +
    'null when both bundles are empty.'),
  evidence_rbo: Ratio('Rank-biased overlap of the two evidence lists (`arms[].evidence`), p = 0.9, in its extrapolated form ' +
    'RBO_ext (Webber, Moffat and Zobel 2010, eq. 30 for lists of uneven length): 1 for identical lists, 0 for disjoint ones, ' +
    'the top ranks weighing most (the first 10 carry ~86% of the weight). Null when both lists are empty, 0 when one is.'),
  took_ms: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: 'Each arm\'s own `took_ms`, `[a, b]`.' }),
  match_strength: Type.Array(MatchStrengthSchema, { minItems: 2, maxItems: 2, description: 'Each arm\'s `match_strength`, `[a, b]`.' })
}, { description: 'How two arms\' answers relate.' })

export const CompareResponseSchema = Type.Object({
  query: Type.String({ description: 'The question every arm was asked.' }),
  top_k: Type.Integer({ description: 'The `top_k` every arm was asked for.' }),
  arms: Type.Array(ArmAnswerSchema, { description: 'One entry per arm, in the request\'s order.' }),
  comparison: Type.Array(PairComparisonSchema, {
    description: 'One entry per pair of arms that both answered: (0, 1), then (0, 2) and (1, 2) with three arms. ' +
      'A pair with a failed arm is left out.'
  }),
  took_ms: Type.Number({ description: 'Wall time of the whole comparison in milliseconds (the arms run concurrently).' })
})
export type CompareResponse = Static<typeof CompareResponseSchema>
