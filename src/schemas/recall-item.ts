import { Type, type Static, type TSchema } from 'typebox'
import { MODE_DEFINITIONS } from '../modes.js'
import { ReadGenerationSchema } from './generation.js'
import { RetrieveFilterSchema } from './filter.js'
import { LegReportSchema, ModeSchema } from './recall-bundle.js'

/** The request's filter as echoed back (response and every item's metadata): the filter schema with its own description. */
const NormalisedFilter = (description: string) =>
  Type.Optional(Type.Unsafe<Static<typeof RetrieveFilterSchema>>({ ...RetrieveFilterSchema, description }))

/** A mode's `score_kind` literals (one literal, or a union of them). */
const scoreKinds = (schema: TSchema): TSchema[] => ('anyOf' in schema ? (schema.anyOf as TSchema[]) : [schema])

/** Each mode's metadata fields, optional here (which appear depends on the mode); `rank` and `score_kind` are everyone's. */
function modeMetadataFields(): Record<string, TSchema> {
  const fields: Record<string, TSchema> = {}
  for (const d of MODE_DEFINITIONS) {
    for (const [name, schema] of Object.entries(d.metadata.properties as Record<string, TSchema>)) {
      if (name === 'rank' || name === 'score_kind' || name in fields) continue
      fields[name] = Type.Optional(schema)
    }
  }
  return fields
}

/**
 * The explanation of an item: every mode's metadata schema (adapters/<mode>/spec.ts) side by side, each field
 * optional. A response schema serializes only declared fields, so what an adapter emits is declared there, and
 * the compiler holds each adapter to its own schema.
 */
const ItemMetadataSchema = Type.Object({
  rank: Type.Integer({ description: 'Position in the bundle, from 1.' }),
  filter: NormalisedFilter('The request\'s filter, normalised (lists sorted, times in UTC), when it had one: the item matched it.'),
  score_kind: Type.Unsafe<string>(Type.Union(MODE_DEFINITIONS.flatMap((d) => scoreKinds((d.metadata.properties as Record<string, TSchema>).score_kind!)), {
    description: 'What `score` is: fused RRF score, convex combination of normalised leg scores, graph match weight, or 1/(1+cost) of an episodic bundle.'
  })),
  ...modeMetadataFields()
}, { additionalProperties: true, description: 'Why the item is here. Which fields appear depends on the mode (each field says which).' })

const RecallItemSchema = Type.Object({
  id: Type.String({ description: 'A chunk id `<doc id>#<index>` (hybrid), an entity id (graphrag) or an Episode id (episodic).' }),
  text: Type.String({ description: 'The text to hand to generation: the chunk, the entity with its relations, or the rendered Episode.' }),
  score: Type.Number({ description: 'Higher is more relevant, in every mode.' }),
  source: Type.String({ description: 'Where the text came from: a document path, the entity\'s source (or `graph:entity/<id>`), or `episode:<id>`.' }),
  mode: ModeSchema,
  metadata: ItemMetadataSchema
}, { description: 'One item of the recall bundle.' })

const ImageItemSchema = Type.Object({
  id: Type.String({ description: 'The picture\'s id, `<doc id>#img-<16 hex of its SHA-256>`.' }),
  score: Type.Number({ description: 'Cosine similarity of the question to the picture\'s text; higher is closer. Comparable among `image_items` only, not with `recall_bundle` scores.' }),
  document: Type.String({ description: 'The id of the document the picture is in.' }),
  page: Type.Optional(Type.Integer({ description: 'The PDF page it is on, from 1.' })),
  caption: Type.String({ description: 'Its caption, else its alt text, else empty.' }),
  text: Type.String({ description: 'The text embedded for it: caption, alt text, headings, OCR text, the sentences around it.' }),
  url: Type.String({ description: 'Where `GET /images/{id}` serves its bytes, with the namespace.' })
}, { description: 'A picture of a document, answered beside the recall bundle.' })

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
      'one of its deliberate differences from m-flow). `match_strength` is then at most `medium`.'
  })),
  cached: Type.Boolean({ description: 'Whether this answer came from the response cache.' }),
  took_ms: Type.Number({ description: 'Wall time of the request in the service, in milliseconds.' }),
  generation: Type.Optional(ReadGenerationSchema),
  image_items: Type.Optional(Type.Array(ImageItemSchema, {
    description: 'hybrid with `include_images: true` only: the pictures nearest the question, best first, at most `top_k`, ranked among themselves (docs/api.md, "Pictures").'
  }))
})
export type RetrieveResponse = Static<typeof RetrieveResponseSchema>
