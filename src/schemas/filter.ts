import { Type, type Static } from 'typebox'
import { DocumentIdSchema, METADATA_KEY_PATTERN } from './ingest.js'

type Condition = string | number | boolean | { any_of: Array<string | number | boolean> } | { gt?: number; gte?: number; lt?: number; lte?: number }

/**
 * One condition on a metadata key: a value (equals), `{any_of}`, or a numeric range. A list of types rather
 * than `anyOf`, as for metadata values: ajv would coerce a number to a string in an `anyOf`'s first branch.
 * An object holding both `any_of` and a bound is refused when the filter is normalised.
 */
export const MetadataConditionSchema = Type.Unsafe<Condition>({
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

export const TimeRangeSchema = Type.Object({
  start: Type.Optional(Type.String({ description: 'ISO 8601; the range starts here (inclusive). Absent: unbounded.' })),
  end: Type.Optional(Type.String({ description: 'ISO 8601; the range ends here (inclusive). Absent: unbounded.' }))
}, {
  additionalProperties: false, minProperties: 1,
  description: 'episodic: only Episodes whose mentioned time overlaps this range (closed intervals: an Episode from s to e ' +
    'overlaps [start, end] when s <= end and e >= start; an Episode with only a start or an end is that instant); Episodes ' +
    'without a mentioned time are left out.'
})

/**
 * `filter` of `POST /retrieve` and of each compare arm: which items a mode may return, applied before ranking.
 * Every key belongs to one mode; its parts are combined with AND.
 */
export const RetrieveFilterSchema = Type.Object({
  doc_ids: Type.Optional(Type.Array(DocumentIdSchema, {
    minItems: 1, maxItems: 10_000, description: 'hybrid: only chunks of these documents.'
  })),
  source_prefix: Type.Optional(Type.String({
    minLength: 1, maxLength: 2000, description: 'hybrid: only chunks of documents whose `source` starts with this (plain string prefix, case-sensitive).'
  })),
  metadata: Type.Optional(Type.Record(Type.String({ pattern: METADATA_KEY_PATTERN }), MetadataConditionSchema, {
    additionalProperties: false,
    description: 'hybrid: conditions on the documents\' `metadata`, one per key, all of which must hold. A document without the key never matches.'
  })),
  entity_types: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
    minItems: 1, maxItems: 100, description: 'graphrag: only entities of these types are items (entities of other types still lead to their neighbours).'
  })),
  time_range: Type.Optional(TimeRangeSchema)
}, {
  additionalProperties: false, minProperties: 1,
  description: 'Which items may come back, applied by every leg before it ranks, so `top_k` items come back while that many ' +
    'match, and ranks are ranks among the matching items. `doc_ids`, `source_prefix` and `metadata` are hybrid\'s, ' +
    '`entity_types` graphrag\'s, `time_range` episodic\'s; all given parts must hold. The response echoes the normalised ' +
    'filter in `filter` and in each item\'s `metadata.filter`.'
})
export type RetrieveFilter = Static<typeof RetrieveFilterSchema>
