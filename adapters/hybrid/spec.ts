/**
 * What `mode=hybrid` publishes: its request options, its part of the filter, its item metadata and its legs.
 * The request and response schemas of the service are composed from these (src/modes.ts), so a field the
 * adapter emits and this file does not declare fails to compile, and the OpenAPI document follows.
 */
import { Type, type Static } from 'typebox'
import { DocumentIdSchema, METADATA_KEY_PATTERN } from '../../src/kernel/document-fields.js'
import type { LegSpec } from '../leg-runner.js'
import { AlphaSchema, ConvexExplanationSchema, FusionSchema, GraphWeightSchema, NormalisationSchema } from './fusion-schema.js'

const HYBRID_LEG_NAMES = ['vector', 'lexical', 'graph'] as const
export type HybridLeg = (typeof HYBRID_LEG_NAMES)[number]
const HybridLegNameSchema = Type.Enum([...HYBRID_LEG_NAMES])

const RrfK = Type.Number({ minimum: 0, maximum: 10_000, description: 'RRF k (hybrid), default 60.' })
const Window = Type.Integer({ minimum: 1, maximum: 1000, description: 'Candidates each hybrid leg contributes, default 50.' })

export const WeightsSchema = Type.Object({
  vector: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Weight of the vector leg\'s RRF contribution, default 1.' })),
  lexical: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Weight of the lexical leg\'s RRF contribution, default 1.' })),
  graph: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'Weight of the graph leg\'s RRF contribution, default 1.' }))
}, { additionalProperties: false, description: 'Per-leg RRF weights (hybrid), default 1 each.' })

const IncludeImages = Type.Boolean({
  description: 'hybrid: also answer `image_items`, the pictures of the namespace\'s documents nearest the question (the same question ' +
    'embedding, over their captions, alt texts, headings and context), ranked among themselves and never mixed into `recall_bundle` ' +
    '(docs/api.md, "Pictures"). Default false: the answer is as without it. A `filter.doc_ids`/`source_prefix` keeps their pictures only; ' +
    'with `filter.metadata` no picture is answered (pictures carry no document metadata).'
})

/** The hybrid options of `POST /retrieve` (and of a compare arm). */
export const hybridOptions = {
  legs: Type.Optional(Type.Array(HybridLegNameSchema, {
    minItems: 1, uniqueItems: true,
    description: 'Hybrid legs to run (default: the namespace\'s retrieval defaults\' `legs`, else `vector` and `lexical`). `graph` adds the passages the namespace\'s knowledge graph ' +
      'reaches from the question: the entities it names (in full or in part) and their one-hop neighbours, each bringing the ' +
      'chunks it came from (docs/api.md, "The graph leg").'
  })),
  rrf_k: Type.Optional(RrfK),
  window: Type.Optional(Window),
  weights: Type.Optional(WeightsSchema),
  fusion: Type.Optional(FusionSchema),
  alpha: Type.Optional(AlphaSchema),
  normalisation: Type.Optional(NormalisationSchema),
  graph_weight: Type.Optional(GraphWeightSchema),
  include_images: Type.Optional(IncludeImages)
}

/** The hybrid options `GET /retrieve` takes as query parameters. */
export const hybridQueryOptions = {
  legs: Type.Optional(Type.String({
    pattern: '^(vector|lexical|graph)(,(vector|lexical|graph)){0,2}$',
    description: 'Hybrid legs to run, comma-separated, from `vector`, `lexical` and `graph` (default: the namespace\'s retrieval defaults\' `legs`, else `vector,lexical`).'
  })),
  rrf_k: Type.Optional(RrfK),
  window: Type.Optional(Window),
  fusion: Type.Optional(FusionSchema),
  alpha: Type.Optional(AlphaSchema),
  normalisation: Type.Optional(NormalisationSchema),
  graph_weight: Type.Optional(GraphWeightSchema),
  include_images: Type.Optional(IncludeImages)
}

type Condition = string | number | boolean | { any_of: Array<string | number | boolean> } | { gt?: number; gte?: number; lt?: number; lte?: number }

/**
 * One condition on a metadata key: a value (equals), `{any_of}`, or a numeric range. A list of types rather
 * than `anyOf`, as for metadata values: ajv would coerce a number to a string in an `anyOf`'s first branch.
 * An object holding both `any_of` and a bound is refused when the filter is normalised.
 */
const MetadataConditionSchema = Type.Unsafe<Condition>({
  type: ['string', 'number', 'boolean', 'object'],
  properties: {
    any_of: {
      type: 'array', minItems: 1, maxItems: 1000, items: { type: ['string', 'number', 'boolean'] },
      description: 'any-of: the value is one of these, or a list value holds one of them (`{"any_of": ["zh", "en"]}`).'
    },
    gt: { type: 'number', description: 'range: the value is greater than this.' },
    gte: { type: 'number', description: 'range: the value is at least this.' },
    lt: { type: 'number', description: 'range: the value is less than this.' },
    lte: { type: 'number', description: 'range: the value is at most this.' }
  },
  additionalProperties: false,
  minProperties: 1,
  description: 'A value (equals: the value is it, or a list value holds it), `{"any_of": [...]}`, or a numeric range ' +
    '`{"gt"|"gte"|"lt"|"lte": number}` (a value that is not a number never matches).'
})

/** Hybrid's part of the request `filter`. */
export const hybridFilter = {
  doc_ids: Type.Optional(Type.Array(DocumentIdSchema, {
    minItems: 1, maxItems: 10_000, description: 'hybrid: only chunks of these documents.'
  })),
  source_prefix: Type.Optional(Type.String({
    minLength: 1, maxLength: 2000, description: 'hybrid: only chunks of documents whose `source` starts with this (plain string prefix, case-sensitive).'
  })),
  metadata: Type.Optional(Type.Record(Type.String({ pattern: METADATA_KEY_PATTERN }), MetadataConditionSchema, {
    additionalProperties: false,
    description: 'hybrid: conditions on the documents\' `metadata`, one per key, all of which must hold. A document without the key never matches.'
  }))
}

const LegHit = Type.Object({
  rank: Type.Integer({ description: 'Rank of the chunk in this leg, from 1.' }),
  score: Type.Number({ description: 'The leg\'s own score: cosine similarity (vector), BM25 score (lexical) or the summed weights of the entity paths (graph).' })
}, { description: 'Where this leg ranked the chunk; absent when the leg did not return it within its `window`.' })

const GraphPathSchema = Type.Object({
  entity_id: Type.String({ description: 'The entity whose evidence the chunk is.' }),
  entity_name: Type.String({ description: 'The entity\'s name.' }),
  matched_by: Type.Union([Type.Literal('name'), Type.Literal('alias'), Type.Literal('partial'), Type.Literal('meaning')], {
    description: 'How the question reached the entity (hop 0) or the named entity it is a neighbour of (hop 1): its name, an alias, a large part of its name, or a name or alias near it by meaning (`similarity`).'
  }),
  similarity: Type.Optional(Type.Number({ description: '`matched_by: meaning` at hop 0: the cosine similarity of the question and the entity\'s nearest name or alias.' })),
  hop: Type.Integer({ minimum: 0, maximum: 1, description: '0: the question names the entity; 1: a neighbour, reached by `relation`.' }),
  relation: Type.Optional(Type.Object({
    type: Type.String({ description: 'Relation type, e.g. `负责`.' }), source: Type.String({ description: 'Entity id.' }), target: Type.String({ description: 'Entity id.' })
  }, { description: 'hop 1: the relation that joined it to a named entity.' })),
  weight: Type.Number({ description: 'What the path gave the chunk: 1.0 named (0.6–1.0 in part), 0.6 one hop, over √n for the entity\'s n-th chunk.' })
}, { description: 'One entity path (entity, relation, hop) that brought the chunk into the graph leg.' })

/** The explanation of a hybrid item. */
export const HybridMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  score_kind: Type.Union([Type.Literal('rrf'), Type.Literal('convex')]),
  doc_id: Type.String({ description: 'hybrid: id of the document the chunk belongs to.' }),
  chunk_index: Type.Integer({ description: 'hybrid: position of the chunk in its document, from 0 (the chunk id is `<doc_id>#<chunk_index>`).' }),
  title: Type.Optional(Type.String({ description: 'hybrid: title of the document.' })),
  heading_path: Type.Optional(Type.Array(Type.String(), {
    description: 'hybrid: the headings above the chunk in its document, outermost first; absent before the first heading.'
  })),
  anchor: Type.Optional(Type.String({
    description: 'hybrid: anchor of the chunk\'s section, for a link to it: the heading\'s explicit `{#id}`, else its GitHub-style slug.'
  })),
  page: Type.Optional(Type.Integer({
    minimum: 1, description: 'hybrid: in a paged document (a PDF), the page the chunk starts on, from 1.'
  })),
  page_end: Type.Optional(Type.Integer({
    minimum: 2, description: 'hybrid: the page the chunk ends on, when it runs on past `page`; absent when it ends on `page`.'
  })),
  // Values of any JSON type here: the serializer would turn a list into a string under the ingest schema's list of types.
  doc_metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), {
    description: 'hybrid: the document\'s `metadata`, as ingested (strings, numbers, booleans, lists of strings).'
  })),
  legs: Type.Object({ vector: Type.Optional(LegHit), lexical: Type.Optional(LegHit), graph: Type.Optional(LegHit) }, {
    description: 'hybrid: rank (from 1) and native score of the item in each leg that found it.'
  }),
  graph_paths: Type.Optional(Type.Array(GraphPathSchema, {
    description: 'hybrid with the `graph` leg: how the graph reached this chunk, heaviest first (at most 3); absent when the graph leg did not find it.'
  })),
  rrf: Type.Optional(Type.Object({
    k: Type.Number({ description: 'The RRF constant k used (request option `rrf_k`, default 60).' }),
    contributions: Type.Object({
      vector: Type.Optional(Type.Number({ description: 'weight / (k + vector rank); absent when the vector leg did not find the chunk.' })),
      lexical: Type.Optional(Type.Number({ description: 'weight / (k + lexical rank); absent when the lexical leg did not find the chunk.' })),
      graph: Type.Optional(Type.Number({ description: 'weight / (k + graph rank); absent when the graph leg did not run or did not find the chunk.' }))
    }, { description: 'What each leg added to `score`, which is their sum.' })
  }, { description: 'hybrid with `fusion: rrf`: the Reciprocal Rank Fusion behind `score`.' })),
  convex: Type.Optional(ConvexExplanationSchema)
})
export type HybridMetadata = Static<typeof HybridMetadataSchema>

/**
 * The steps of a hybrid request. Every leg degrades: a failed leg leaves the others' results (all failed: 503). The
 * `graph` leg runs, and is reported, only when a request names it.
 */
export const HYBRID_LEGS = {
  embedding: { backend: 'embedder', timeout: 'embedding', onFailure: 'degrade' },
  vector: { backend: 'vectors', timeout: 'vector', onFailure: 'degrade' },
  lexical: { backend: 'lexical', timeout: 'lexical', onFailure: 'degrade' },
  graph: { backend: 'graph', timeout: 'graph', onFailure: 'degrade' }
} as const satisfies Record<string, LegSpec>

/** The start-up steps (src/services.ts) hybrid waits for before it answers. */
export const HYBRID_STARTUP = ['embedder', 'documents', 'demo:documents'] as const
