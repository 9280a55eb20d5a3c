import { Type, type Static } from 'typebox'
import { AlphaSchema, FusionSchema, GraphWeightSchema, NormalisationSchema } from './fusion.js'
import { RetrieveBodySchema, WeightsSchema } from './retrieve.js'
import { StructuresSchema } from './structures.js'

const HybridDefaultsSchema = Type.Object({
  fusion: Type.Optional(FusionSchema),
  alpha: Type.Optional(AlphaSchema),
  normalisation: Type.Optional(NormalisationSchema),
  rrf_k: Type.Optional(RetrieveBodySchema.properties.rrf_k),
  window: Type.Optional(RetrieveBodySchema.properties.window),
  weights: Type.Optional(WeightsSchema),
  legs: Type.Optional({ ...RetrieveBodySchema.properties.legs, description: 'The legs a request that names none runs (default `vector` and ' +
    '`lexical`); `npm run tune` stores `["vector", "lexical", "graph"]` where the graph leg measured better on the judged set. ' +
    'A request\'s own `legs` wins.' }),
  graph_weight: Type.Optional(GraphWeightSchema)
}, {
  additionalProperties: false,
  description: 'Hybrid options used when a request of this namespace does not set them. `alpha`, `normalisation` and `graph_weight` go with ' +
    '`fusion: convex`, `rrf_k` and `weights` with `fusion: rrf` (defaults without `fusion` are taken as rrf\'s, so `alpha` or ' +
    '`normalisation` need `fusion: convex` here); a request naming the other fusion gets none of them, only `window` and `legs`. ' +
    'Defaults that name no fusion and set neither `rrf_k` nor `weights` leave the service\'s default fusion: convex, min-max, alpha 0.5.'
})

export const RetrievalDefaultsSchema = Type.Object({
  hybrid: Type.Optional(HybridDefaultsSchema),
  structures: Type.Optional(StructuresSchema),
  note: Type.Optional(Type.String({ maxLength: 2000, description: 'Why these defaults (e.g. the tune run\'s held-out figures).' }))
}, { additionalProperties: false, description: 'A namespace\'s retrieval defaults.' })
export type RetrievalDefaultsBody = Static<typeof RetrievalDefaultsSchema>

export const StoredRetrievalDefaultsSchema = Type.Object({
  namespace: Type.String({ description: 'The namespace.' }),
  hybrid: HybridDefaultsSchema,
  structures: Type.Optional(StructuresSchema),
  note: Type.Optional(Type.String({ description: 'Why these defaults.' })),
  updated_at: Type.Optional(Type.String({ description: 'When they were stored (ISO 8601); absent when none are stored.' })),
  stored_in: Type.String({ description: '`redis` (shared by every replica) or `file` (DATA_DIR/retrieval-defaults.json).' })
}, { description: 'The namespace\'s stored retrieval defaults; `hybrid` is `{}` when none are stored (the service defaults apply).' })
