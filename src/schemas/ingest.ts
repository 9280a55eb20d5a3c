import { GenerationSchema, ReadGenerationSchema } from './generation.js'
import { NextCursorSchema } from './paging.js'
import { Type, type Static } from 'typebox'
import { MAX_METADATA_BYTES } from '../corpus/documents/validation.js'
import { DocumentIdSchema, METADATA_KEY_PATTERN } from '../kernel/document-fields.js'
import { DocumentIndexStatusSchema } from './index-status.js'
import { NamespaceSchema } from './common.js'

export { DocumentIdSchema,  }

export const MAX_DOCUMENTS_PER_REQUEST = 1000
export const MAX_DOCUMENT_CHARS = 1_000_000


/**
 * One type list rather than `anyOf`: with the app's type coercion, ajv would coerce a number to a string
 * trying an `anyOf`'s first branch; with a list of types it coerces only a value none of them fits.
 */
const MetadataValueSchema = Type.Unsafe<string | number | boolean | string[]>({
  type: ['string', 'number', 'boolean', 'array'], items: { type: 'string' },
  description: 'A string, a number, a boolean or a list of strings.'
})

const MAX_IMAGES_PER_DOCUMENT = 200
const MAX_IMAGE_BASE64_CHARS = 8 * 1024 * 1024

const ImageInputSchema = Type.Object({
  data: Type.String({
    minLength: 1, maxLength: MAX_IMAGE_BASE64_CHARS, pattern: '^[A-Za-z0-9+/]+={0,2}$', contentEncoding: 'base64',
    description: 'The picture\'s bytes, base64 (PNG, JPEG, GIF, WebP, TIFF or AVIF, told by its first bytes), at most 8 MiB of base64.'
  }),
  alt: Type.Optional(Type.String({ maxLength: 2000, description: 'Its alt text.' })),
  caption: Type.Optional(Type.String({ maxLength: 2000, description: 'Its caption.' })),
  heading_path: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 6, description: 'The headings above it, outermost first.' })),
  context: Type.Optional(Type.String({ maxLength: 4000, description: 'The sentences around it.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'The PDF page it is on, from 1.' })),
  ocr_text: Type.Optional(Type.String({ maxLength: 4000, description: 'Text the picture holds, embedded with its caption (the file readers fill it by OCR: docs/formats.md, "Pictures").' }))
}, { additionalProperties: false })

export const DocumentInputSchema = Type.Object({
  id: DocumentIdSchema,
  text: Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_CHARS, 'x-limit': 'MAX_DOCUMENT_CHARS', description: `Markdown or plain text, at most ${MAX_DOCUMENT_CHARS.toLocaleString('en')} characters (MAX_DOCUMENT_CHARS).` }),
  source: Type.Optional(Type.String({ maxLength: 2000, description: 'Path or URL shown as the item source; default the id.' })),
  title: Type.Optional(Type.String({ maxLength: 500, description: 'Default: the front matter `title`, else the first `#` heading.' })),
  metadata: Type.Optional(Type.Record(Type.String({ pattern: METADATA_KEY_PATTERN }), MetadataValueSchema, {
    additionalProperties: false,
    description: `Flat metadata: keys (${METADATA_KEY_PATTERN}: a letter or \`_\`, then letters, digits or \`_\`, at most 64) to a ` +
      `string, a number, a boolean or a list of strings; at most ${MAX_METADATA_BYTES} bytes as JSON (UTF-8). Stored with every ` +
      'chunk, returned in each item\'s `metadata.doc_metadata`, and what `filter.metadata` of `POST /retrieve` tests.'
  })),
  images: Type.Optional(Type.Array(ImageInputSchema, {
    maxItems: MAX_IMAGES_PER_DOCUMENT,
    description: `The document's pictures, at most ${MAX_IMAGES_PER_DOCUMENT} (docs/formats.md, "Pictures"): each stored as an image record of the document ` +
      '(the same picture twice is one), embedded from its caption, alt text, headings and context, and answered in `image_items` of ' +
      '`include_images`. They replace the pictures the document had: a document sent without `images` has none after. ' +
      '`npm run ingest` fills them from the files\' pictures.'
  }))
}, { additionalProperties: false })

const DOCUMENT_LIST = { minItems: 1, maxItems: MAX_DOCUMENTS_PER_REQUEST, 'x-limit': 'MAX_DOCUMENTS_PER_REQUEST', description: `At most ${MAX_DOCUMENTS_PER_REQUEST.toLocaleString('en')} documents (MAX_DOCUMENTS_PER_REQUEST).` }

const OnInvalidSchema = Type.Union([Type.Literal('reject'), Type.Literal('skip')], {
  description: 'What an invalid document does (a schema misfit, an id given twice, a blank or junk text, metadata too large): ' +
    '`reject` (the default) refuses the whole body with a 400 naming its first schema misfit, or else every other problem, and nothing is ' +
    'written; `skip` writes the ' +
    'valid documents and answers each invalid one in `refused`, with its index, id and reason (the body itself, its namespace ' +
    'and the number of documents, must still fit: a 400 otherwise). The MCP `ingest` tool and `npm run ingest` use `skip`.'
})

export const IngestDocumentsBodySchema = Type.Object({
  documents: Type.Array(DocumentInputSchema, DOCUMENT_LIST),
  namespace: Type.Optional(NamespaceSchema),
  on_invalid: Type.Optional(OnInvalidSchema)
}, { additionalProperties: false })
export type IngestDocumentsBody = Static<typeof IngestDocumentsBodySchema>

/**
 * A documents body whose documents are judged one by one afterwards (`on_invalid: "skip"`): its namespace, its
 * options and a list of 1 to MAX_DOCUMENTS_PER_REQUEST of anything.
 */
export const IngestDocumentsEnvelopeSchema = Type.Object({
  documents: Type.Array(Type.Unknown(), DOCUMENT_LIST),
  namespace: Type.Optional(NamespaceSchema),
  on_invalid: Type.Optional(OnInvalidSchema)
}, { additionalProperties: false })

/** Documents of a write that were not written, each with the reason. */
const SkippedDocumentsSchema = Type.Array(Type.Object({ id: Type.String(), reason: Type.String() }), {
  description: 'Documents that give nothing to index (no chunk: front matter, scripts or HTML components only): not written ' +
    'and not counted in `documents` (a version held before stays as it was). Absent when none.'
})

const RefusedDocumentsSchema = Type.Array(Type.Object({
  index: Type.Integer({ description: 'Its place in `documents`, from 0.' }),
  id: Type.Optional(Type.String({ description: 'Its id, when it has a string one.' })),
  reason: Type.String({ description: 'Every problem, each naming the field and the value, as the 400 of `reject` would.' })
}), { description: 'With `on_invalid: "skip"`: the invalid documents, not written, in the order sent (empty when none).' })

const NormalisedDocumentsSchema = Type.Array(Type.Object({
  id: Type.String(),
  chars: Type.Integer({ description: 'Characters removed, or replaced by a space, as carrying no meaning (stored as `metadata.normalised_chars`).' })
}), { description: 'Documents whose text held control or invisible characters, removed before writing (docs/formats.md). Absent when none.' })

/** What a documents write contributed to the derived structures: the ingest answer's and an ingest job's `derived`. */
const DerivedCountsSchema = Type.Object({
  entities: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: entities the documents of this request contribute to the derived graph, counted once per document.' })),
  relations: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: relations they contribute, counted once per document.' })),
  blocked: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: derived entities and relations left out because an imported one holds the id.' })),
  episodes: Type.Optional(Type.Integer({ description: 'With `DERIVED_EPISODES=true`: the derived Episodes the documents of this request have now.' })),
  facets: Type.Optional(Type.Integer({ description: 'Their Facets (one per section, or per chunk of a longer section).' })),
  points: Type.Optional(Type.Integer({ description: 'Their FacetPoints (key sentences).' })),
  episodes_blocked: Type.Optional(Type.Integer({ description: 'Derived Episode ids left alone because an imported Episode holds them.' })),
  episode_texts_embedded: Type.Optional(Type.Integer({ description: 'Distinct texts of the Episodes written now that were embedded: the edge labels and the names of linked entities that the namespace\'s derived Episodes did not hold yet (an entity link\'s label is the entity\'s name: one text for both); labels, key sentences and summaries take their chunks\' vectors by default.' })),
  episode_vectors_reused: Type.Optional(Type.Integer({ description: 'Records of those Episodes whose vector is their chunk\'s stored vector, their chunks\' normalised mean (a summary), or the stored vector of the same text (an edge label or entity name the namespace\'s derived Episodes hold already): not embedded.' })),
  llm: Type.Optional(Type.Object({
    chunks: Type.Integer({ description: 'Chunks of the written documents.' }),
    cached: Type.Integer({ description: 'Of those, extracted before under the same model and prompts: answered from the cache, no call.' }),
    failed: Type.Integer({ description: 'Of those, without an extraction (every attempt failed): they contribute the rules\' part only; written again, they are asked again.' }),
    calls: Type.Integer({ description: 'Calls of the chat endpoint this write made, retries included.' }),
    retries: Type.Integer({ description: 'Of those, retries after a 429, 408, 5xx, timeout, lost connection or malformed answer.' }),
    prompt_tokens: Type.Integer({ description: 'Prompt tokens of those calls, as the server counted them (`usage`).' }),
    completion_tokens: Type.Integer({ description: 'Completion tokens of those calls.' }),
    total_tokens: Type.Integer({ description: 'Total tokens of those calls.' })
  }, { description: 'With `LLM_EXTRACTION=true`: the LLM\'s extraction of the written chunks (docs/llm-extraction.md).' }))
}, { description: 'What the documents contribute to the namespace\'s derived knowledge graph and derived Episodes (docs/derivation.md).' })

const ImagesReportSchema = Type.Object({
  written: Type.Integer({ description: 'Pictures stored and embedded by this write (new, or described otherwise).' }),
  unchanged: Type.Integer({ description: 'Pictures held already as sent: not embedded or written again.' }),
  small: Type.Integer({ description: 'Pictures under the size floor (IMAGE_MIN_SIDE_PX, IMAGE_MIN_BYTES): icons and spacers, not stored.' }),
  removed: Type.Integer({ description: 'Pictures the written documents held before and no longer have.' }),
  refused: Type.Array(Type.Object({
    document: Type.String(), index: Type.Integer({ description: 'Its place in the document\'s `images`, from 0.' }), reason: Type.String()
  }), { description: 'Pictures that could not be read (corrupt, truncated, not a picture, too many pixels); their documents are written.' })
}, { description: 'What the write did with the documents\' pictures; absent when they had none and held none.' })

export const IngestSummarySchema = Type.Object({
  documents: Type.Integer({ description: 'Documents written by this request.' }),
  chunks: Type.Integer({ description: 'Chunks of the documents of this request (written, or held already).' }),
  replaced: Type.Integer({ description: 'Documents that existed before and were replaced.' }),
  unchanged: Type.Integer({ description: 'Documents the namespace already held exactly as sent (same chunks, title, source and metadata): not embedded or written again.' }),
  unchanged_ids: Type.Array(Type.String(), { description: 'Their ids, in the order sent.' }),
  skipped: Type.Optional(SkippedDocumentsSchema),
  refused: Type.Optional(RefusedDocumentsSchema),
  normalised: Type.Optional(NormalisedDocumentsSchema),
  took_ms: Type.Number(),
  generation: Type.Optional(GenerationSchema),
  derived: Type.Optional(DerivedCountsSchema),
  images: Type.Optional(ImagesReportSchema)
})

const DocumentSummarySchema = Type.Object({
  id: Type.String(),
  title: Type.Optional(Type.String()),
  source: Type.String(),
  chunks: Type.Integer(),
  index_status: Type.Optional(DocumentIndexStatusSchema)
})

export const DocumentListSchema = Type.Object({
  namespace: Type.String({ description: 'The namespace listed.' }),
  documents: Type.Array(DocumentSummarySchema, { description: 'This page\'s documents, in id order.' }),
  total: Type.Integer({ description: 'Documents the namespace holds (all pages).' }),
  chunks: Type.Integer({ description: 'Chunks of those documents (all pages).' }),
  next_cursor: NextCursorSchema,
  generation: Type.Optional(ReadGenerationSchema)
})

/** Most documents one `POST /documents/unchanged` asks about. */
export const MAX_FINGERPRINTS_PER_REQUEST = 10_000

const FingerprintSchema = Type.String({
  pattern: '^[a-z0-9]{1,8}:[0-9a-f]{64}$',
  description: 'The document\'s fingerprint: `d1:` and the SHA-256 (lower-case hex) of the UTF-8 of the JSON array ' +
    '`[id, text, source ?? id, title ?? null, metadata ?? null]` as JavaScript\'s `JSON.stringify` writes it (metadata keys in the ' +
    'order the document is sent). docs/write-path.md, "Unchanged documents".'
})

export const UnchangedQueryBodySchema = Type.Object({
  documents: Type.Array(Type.Object({ id: DocumentIdSchema, fingerprint: FingerprintSchema }, { additionalProperties: false }), {
    minItems: 1, maxItems: MAX_FINGERPRINTS_PER_REQUEST, 'x-limit': 'MAX_FINGERPRINTS_PER_REQUEST',
    description: `At most ${MAX_FINGERPRINTS_PER_REQUEST.toLocaleString('en')} documents (MAX_FINGERPRINTS_PER_REQUEST).`
  }),
  namespace: Type.Optional(NamespaceSchema)
}, { additionalProperties: false })

export const UnchangedAnswerSchema = Type.Object({
  namespace: Type.String(),
  documents: Type.Array(Type.Object({
    id: Type.String(),
    held: Type.Boolean({ description: 'The namespace holds a document of this id (an ingest of it would replace it, or find it unchanged).' }),
    unchanged: Type.Boolean({
      description: 'The namespace holds it made from the input of this fingerprint with the running chunker, analyzer and model: ' +
        'an ingest of it would report it `unchanged` and write nothing, so its body need not be sent.'
    }),
    chunks: Type.Optional(Type.Integer({ description: 'Its chunks, when unchanged.' }))
  }), { description: 'One per document asked about, in the order asked.' }),
  generation: Type.Optional(ReadGenerationSchema)
})

export const DeletedSchema = Type.Object({
  deleted: Type.String({ description: 'The id that was removed.' }),
  generation: Type.Optional(GenerationSchema)
})

export const IngestDocumentsQuerySchema = Type.Object({
  wait: Type.Optional(Type.Boolean({
    description: '`false`: run as a job whatever the size (202, then `GET /ingest/jobs/{id}`); `true`: answer when written whatever the ' +
      'size. Unset: a body over `INGEST_JOB_BODY_BYTES` (default 1 MiB) runs as a job, a smaller one answers when written.'
  }))
}, { additionalProperties: false })

const Progress = (what: string) => Type.Object({
  done: Type.Integer({ minimum: 0, description: `${what} done.` }),
  total: Type.Integer({ minimum: 0, description: `${what} in all.` })
})

export const IngestJobSchema = Type.Object({
  id: Type.String({ description: 'The job\'s id.' }),
  namespace: Type.String(),
  state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed'), Type.Literal('cancelled')], {
    description: '`running`, then `done`, `failed` (see `errors`; the batches before stay written) or `cancelled` (the documents before `documents.done` are written, the others are not).'
  }),
  cancel_requested: Type.Boolean({ description: 'A cancel was asked for: the batch in flight still lands whole, no later one starts.' }),
  created_at: Type.String(),
  finished_at: Type.Optional(Type.String()),
  documents: { ...Progress('Documents'), description: 'Documents written or found unchanged: always the first `done` of the body, in its order.' },
  chunks: { ...Progress('Chunks'), description: 'Their chunks: those of the batches written, and of the batch in flight the ones embedded so far.' },
  rate: Type.Object({ documents_per_second: Type.Number(), chunks_per_second: Type.Number() }, { description: 'Since the job started.' }),
  eta_seconds: Type.Optional(Type.Number({ description: 'Seconds left at the rate so far, while running (once a chunk is done).' })),
  in_flight: Type.Optional(Type.Object({
    ids: Type.Array(Type.String(), { description: 'Its documents: written together, each whole.' }),
    chunks: Progress('Its chunks embedded')
  }, { description: 'The batch being written now.' })),
  files: Type.Optional({ ...Progress('Files read'), description: 'With `POST /ingest/files`: files read (or found unreadable) so far, and all of them; their documents are written once every file is read.' }),
  pages: Type.Optional({ ...Progress('Pages recognised by OCR (or failed)'), description: 'With `POST /ingest/files`: pages recognised by OCR so far, and the pages to recognise in the files opened so far (a file\'s count is known once its first page is done).' }),
  reading: Type.Optional(Type.Object({
    file: Type.String({ description: 'The file being read (its path in the upload).' }),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'The page OCR finished last in it, from 1.' }))
  }, { description: 'While the files are read: where the reading is.' })),
  errors: Type.Array(Type.String(), { description: 'Why the job failed; with `POST /ingest/files` also each file, page or picture not read, as a sentence (`file_errors` holds them as fields).' }),
  file_errors: Type.Optional(Type.Array(Type.Object({
    file: Type.String({ description: 'The file, by its path in the upload.' }),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'The page OCR failed on (the rest of the file is written).' })),
    reason: Type.String({ description: '`refused: …` or `skipped: …` for a whole file (not written), else what was left out of it.' })
  }), { description: 'With `POST /ingest/files`: what was not read, with its file and page; every other file is written.' })),
  derived: Type.Optional({
    ...DerivedCountsSchema,
    description: 'With a derived structure on (`DERIVED_GRAPH`, `DERIVED_EPISODES`): what the documents written so far contribute to it, ' +
      'summed over the batches written (`result.derived` at the end); absent until a batch is written.'
  }),
  result: Type.Optional({ ...IngestSummarySchema, description: 'Once the job ended: what the synchronous answer says, over the documents done, with the `generation` to read them with.' }),
  took_ms: Type.Number(),
  status_url: Type.String({ description: 'Where to read the job: `/ingest/jobs/{id}`.' })
})
export type IngestJob = Static<typeof IngestJobSchema>
