import { Type, type Static } from 'typebox'
import { episodicOptions } from '../../adapters/episodic/spec.js'
import { graphragOptions } from '../../adapters/graphrag/spec.js'
import { hybridOptions, hybridQueryOptions, WeightsSchema } from '../../adapters/hybrid/spec.js'
import { MODE_DEFINITIONS } from '../modes.js'
import { NamespaceSchema, TopKSchema } from './common.js'
import { RetrieveFilterSchema } from './filter.js'
import { MinGenerationSchema } from './generation.js'
import { ModeSchema } from './recall-bundle.js'
import { RequestStructuresSchema } from './structures.js'

export { WeightsSchema }

/** Every mode's options side by side; each belongs to one mode (its definition's `options`), checked after validation. */
const modeOptions = Object.assign({}, ...MODE_DEFINITIONS.map((d) => d.options)) as typeof hybridOptions & typeof graphragOptions & typeof episodicOptions
const modeQueryOptions = Object.assign({}, ...MODE_DEFINITIONS.map((d) => d.queryOptions)) as typeof hybridQueryOptions

export const RetrieveQuerySchema = Type.Object({
  mode: ModeSchema,
  q: Type.String({ minLength: 1, description: 'The question. Not blank; at most MAX_QUERY_CHARS characters (default 2000).' }),
  top_k: Type.Optional(TopKSchema),
  ...modeQueryOptions,
  structures: Type.Optional(RequestStructuresSchema),
  namespace: Type.Optional(NamespaceSchema),
  min_generation: Type.Optional(MinGenerationSchema)
}, { additionalProperties: false })
export type RetrieveQuery = Static<typeof RetrieveQuerySchema>

export const RetrieveBodySchema = Type.Object({
  mode: ModeSchema,
  query: Type.String({ minLength: 1, description: 'The question. Not blank; at most MAX_QUERY_CHARS characters (default 2000).' }),
  top_k: Type.Optional(TopKSchema),
  namespace: Type.Optional(NamespaceSchema),
  min_generation: Type.Optional(MinGenerationSchema),
  filter: Type.Optional(RetrieveFilterSchema),
  structures: Type.Optional(RequestStructuresSchema),
  ...modeOptions
}, { additionalProperties: false })
export type RetrieveBody = Static<typeof RetrieveBodySchema>
