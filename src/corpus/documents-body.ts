import { DocumentInputSchema, IngestDocumentsBodySchema, IngestDocumentsEnvelopeSchema, type IngestDocumentsBody } from '../schemas/ingest.js'
import { checkAgainst } from '../schemas/validation.js'
import { documentProblems, problemsByDocument } from './documents/validation.js'
import { normaliseDocument } from './documents/normalise.js'
import type { DocumentInput } from './documents/input.js'

const checkDocumentsSchema = checkAgainst(IngestDocumentsBodySchema)

const checkEnvelope = checkAgainst(IngestDocumentsEnvelopeSchema)

/**
 * The one check of a documents body (`{documents, namespace?, on_invalid?}`), for `POST /ingest/documents`, the CLI
 * and the demo loader alike: the schema as the route runs it (same coercion, same message), then what the schema
 * cannot say ({@link documentProblems}: an id given twice, a blank text, junk left after normalising, metadata over its
 * byte limit). Every problem names the field and the value; `[]` when it can be written (a schema misfit is
 * reported alone).
 */
export function validateDocumentsBody(body: unknown): string[] {
  const misfit = checkDocumentsSchema(body)
  if (misfit !== undefined) return [misfit]
  return documentProblems((body as IngestDocumentsBody).documents)
}

/** A 400 for a bad documents body: every problem names its field and value. */
export class DocumentIngestError extends Error {
  override name = 'DocumentIngestError'
  constructor(readonly problems: string[]) {
    super(`invalid documents body: ${problems.join('; ')}`)
  }
}

/** The documents of a body that passes {@link validateDocumentsBody}; throws DocumentIngestError otherwise. */
export function checkedDocuments(body: unknown): IngestDocumentsBody['documents'] {
  const problems = validateDocumentsBody(body)
  if (problems.length > 0) throw new DocumentIngestError(problems)
  return (body as IngestDocumentsBody).documents
}

/** A document of a body not written because it is invalid: where it was, its id when it has one, and every reason. */
export interface RefusedDocument {
  index: number
  id?: string
  reason: string
}

/** A document whose text was normalised before it was written, and how many characters that removed or replaced. */
export interface NormalisedDocument {
  id: string
  chars: number
}

/** The documents of a body as they are written, and what became of the others. */
export interface PreparedDocuments {
  /** The valid documents, in the order sent, their text normalised (`metadata.normalised_chars` counting it). */
  documents: DocumentInput[]
  /** With `on_invalid: "skip"`: the documents left out, in the order sent. */
  refused: RefusedDocument[]
  normalised: NormalisedDocument[]
}

/**
 * The documents of a body to write. `reject` (the default): the whole body is checked ({@link validateDocumentsBody})
 * and any problem throws a DocumentIngestError naming every one, so nothing is written. `skip`: each document is
 * checked alone against the document schema and then by {@link problemsByDocument} (an id given twice refuses the
 * later ones); those with a problem are `refused` with their reasons, the others written. Either way the written
 * documents' texts are normalised.
 */
export function prepareDocuments(body: unknown): PreparedDocuments {
  const onInvalid = (body as { on_invalid?: unknown } | null)?.on_invalid
  if (onInvalid !== 'skip') {
    const documents = checkedDocuments(body)
    return { ...normalisedAll(documents), refused: [] }
  }
  const envelope = checkEnvelope(body)
  if (envelope !== undefined) throw new DocumentIngestError([envelope])
  const list = (body as { documents: unknown[] }).documents
  const refused: RefusedDocument[] = []
  const fitting: Array<{ index: number; document: DocumentInput }> = []
  list.forEach((document, index) => {
    const misfit = checkDocument(document, index)
    if (misfit === undefined) fitting.push({ index, document: document as DocumentInput })
    else refused.push({ index, ...idOf(document), reason: misfit })
  })
  const problems = problemsByDocument(fitting.map((f) => f.document), (i) => fitting[i]!.index)
  const bad = new Set(problems.map((p) => p.index))
  for (const p of problems) refused.push({ index: p.index, id: p.id, reason: p.problems.join('; ') })
  refused.sort((a, b) => a.index - b.index)
  return { ...normalisedAll(fitting.filter((f) => !bad.has(f.index)).map((f) => f.document)), refused }
}

const checkOneDocument = checkAgainst(DocumentInputSchema, '')

/** One document against the document schema, its message naming `body/documents/<index>` as the whole body's would. */
function checkDocument(document: unknown, index: number): string | undefined {
  const misfit = checkOneDocument(document)
  // checked with no prefix, a message starts with the field's path below the document (`/text …`), or ` …` for the document
  return misfit === undefined ? undefined : `body/documents/${index}${misfit}`
}

function idOf(document: unknown): { id?: string } {
  const id = (document as { id?: unknown } | null)?.id
  return typeof id === 'string' ? { id } : {}
}

function normalisedAll(documents: readonly DocumentInput[]): Omit<PreparedDocuments, 'refused'> {
  const normalised: NormalisedDocument[] = []
  const out = documents.map((d) => {
    const { document, normalised: chars } = normaliseDocument(d)
    if (chars > 0) normalised.push({ id: d.id, chars })
    return document
  })
  return { documents: out, normalised }
}
