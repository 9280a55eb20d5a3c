import { IngestDocumentsBodySchema, type IngestDocumentsBody } from '../schemas/ingest.js'
import { checkAgainst } from '../schemas/validation.js'
import { documentProblems } from './documents.js'

const checkDocumentsSchema = checkAgainst(IngestDocumentsBodySchema)

/**
 * The one check of a documents body (`{documents, namespace?}`), for `POST /ingest/documents`, the CLI and
 * the demo loader alike: the schema as the route runs it (same coercion, same message), then what the
 * schema cannot say ({@link documentProblems}: an id given twice, a blank text, metadata over its byte
 * limit). Every problem names the field and the value; `[]` when it can be written (a schema misfit is
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
