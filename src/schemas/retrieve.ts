import { Type, type Static } from 'typebox'
import { episodicOptionProperties } from '../../adapters/episodic/config.js'
import { LegNameSchema, NamespaceSchema, TopKSchema } from './common.js'
import { RetrieveFilterSchema } from './filter.js'
import { ModeSchema } from './recall-bundle.js'

const RrfK = Type.Number({ minimum: 0, maximum: 10_000, description: 'RRF k (hybrid), default 60.' })
import { AlphaSchema, FusionSchema, NormalisationSchema } from './fusion.js'
const Window = Type.Integer({ minimum: 1, maximum: 1000, description: 'Candidates each hybrid leg contributes, default 50.' })

export const RetrieveQuerySchema = Type.Object({
  mode: ModeSchema,
  q: Type.String({ minLength: 1, description: 'The question. Not blank; at most MAX_QUERY_CHARS characters (default 2000).' }),
  top_k: Type.Optional(TopKSchema),
  legs: Type.Optional(Type.String({
    pattern: '^(vector|lexical)(,(vector|lexical))?$',
    description: 'Hybrid legs to run, comma-separated: `vector`, `lexical` or `vector,lexical` (default both).'
  })),
  rrf_k: Type.Optional(RrfK),
  window: Type.Optional(Window),
  fusion: Type.Optional(FusionSchema),
  alpha: Type.Optional(AlphaSchema),
  normalisation: Type.Optional(NormalisationSchema),
  namespace: Type.Optional(NamespaceSchema)
}, { additionalProperties: false })
export type RetrieveQuery = Static<typeof RetrieveQuerySchema>

export const WeightsSchema = Type.Object({
  vector: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Weight of the vector leg\'s RRF contribution, default 1.' })),
  lexical: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Weight of the lexical leg\'s RRF contribution, default 1.' }))
}, { additionalProperties: false, description: 'Per-leg RRF weights (hybrid), default 1 each.' })

export const RetrieveBodySchema = Type.Object({
  mode: ModeSchema,
  query: Type.String({ minLength: 1, description: 'The question. Not blank; at most MAX_QUERY_CHARS characters (default 2000).' }),
  top_k: Type.Optional(TopKSchema),
  namespace: Type.Optional(NamespaceSchema),
  filter: Type.Optional(RetrieveFilterSchema),
  legs: Type.Optional(Type.Array(LegNameSchema, { minItems: 1, uniqueItems: true, description: 'Hybrid legs to run (default both).' })),
  rrf_k: Type.Optional(RrfK),
  window: Type.Optional(Window),
  weights: Type.Optional(WeightsSchema),
  fusion: Type.Optional(FusionSchema),
  alpha: Type.Optional(AlphaSchema),
  normalisation: Type.Optional(NormalisationSchema),
  max_relations: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Relations shown per graphrag item, default 10.' })),
  episodic: Type.Optional(Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: false,
    properties: episodicOptionProperties(),
    description: 'Episodic options: `display_mode`, `normalisation` (`query`, the default, or m-flow\'s `collection`) and ' +
      'per-request overrides of the tuning constants (spec section 2).'
  }))
}, { additionalProperties: false })
export type RetrieveBody = Static<typeof RetrieveBodySchema>
