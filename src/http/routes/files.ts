import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { createWriteStream } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { IngestJobLimitError } from '../../corpus/ingest-jobs.js'
import { readUploadedFiles, type UploadedFile } from '../../corpus/uploaded-files.js'
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceSchema } from '../../schemas/common.js'
import { errorExample, ErrorSchema, MemoryBudgetResponse, ModelMismatchResponse } from '../../schemas/error.js'
import { IngestJobSchema } from '../../schemas/ingest.js'
import { checkAgainst, describeValue } from '../../schemas/validation.js'
import { NamespaceForbiddenError, namespaceOfRequest } from '../plugins/security.js'
import { jobAnswer, jobExample, jobUrl } from './ingest-jobs.js'

const WRITES: readonly StartupStep[] = ['documents', 'demo:documents', ...WRITE_STEPS]

const FilesQuerySchema = Type.Object({ namespace: Type.Optional(NamespaceSchema) }, { additionalProperties: false })
const checkQuery = checkAgainst(FilesQuerySchema, 'querystring')
const checkNamespace = checkAgainst(NamespaceSchema, 'body/namespace')

/** The form as Swagger shows it; the route reads it part by part (the files go to disk as they arrive). */
const FilesFormSchema = Type.Object({
  files: Type.Array(Type.String({ format: 'binary' }), {
    description: 'One or more files (each part with a `filename`; a path in it, as a folder upload sends, is kept as the document\'s `source`): ' +
      'Markdown, text (any encoding), HTML, PDF (pages without text by OCR), DOCX, PNG, JPEG, WebP, TIFF (by OCR).'
  }),
  namespace: Type.Optional({ ...NamespaceSchema, description: 'The namespace (also `?namespace=`; default `default`).' })
})

/** Path segments a file name may hold: no empty, `.` or `..` segment, no control character. */
function safeName(filename: string, index: number): string {
  const segments = filename.replace(/[\u0000-\u001f\u007f]/g, '').split(/[\\/]+/).filter((s) => s !== '' && s !== '.' && s !== '..')
  return segments.length > 0 ? segments.join('/') : `file-${index + 1}`
}

/**
 * `POST /ingest/files`: files in a multipart form, saved to a temporary folder as they arrive (each and all of them
 * bounded: INGEST_FILE_MAX_BYTES, INGEST_FILES_MAX_BYTES, INGEST_FILES_MAX_COUNT), then read and written as an
 * ingest job (src/corpus/uploaded-files.ts, src/corpus/ingest-jobs.ts); the folder is removed when the job ends.
 */
const fileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const limits = app.runtime.config.ingest.files
  // registered in this plugin only: the other routes still take JSON and answer 415 to a form
  await app.register(multipart, {
    limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: 10, fieldSize: 1000, parts: limits.maxFiles + 10 },
    throwFileSizeLimit: false,
    // a folder upload names each file by its path below the folder: kept as the document's source
    preservePath: true
  })

  const tooLarge = (message: string) => new Errors.filesTooLarge(message)

  app.post('/ingest/files', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace documents from files (multipart upload; scans by OCR), as an ingest job',
      description: 'Each file becomes a document, read as `npm run ingest` reads it (docs/formats.md): Markdown, text in any encoding, HTML, ' +
        'PDF (a page without a text layer is recognised by OCR), DOCX, and image files (PNG, JPEG, WebP, TIFF: recognised by OCR, and ' +
        'kept as the document\'s image record, answered in `image_items`). Its id is its path without the extension, `/` made `-`. ' +
        'Pictures a Markdown or HTML file names are read from the files sent with it. The request answers 202 once the files are ' +
        'received: poll `status_url` (`files`, `pages` recognised, `reading`), cancel with `DELETE`. A file that cannot be read ' +
        '(corrupt, truncated, an image bomb, unsupported) or a page OCR failed on is answered in the job\'s `file_errors` (and ' +
        '`errors`) with its file and page; the other files are written. Limits: INGEST_FILE_MAX_BYTES a file (default 100 MiB), ' +
        'INGEST_FILES_MAX_BYTES a request (default 500 MiB), INGEST_FILES_MAX_COUNT files (default 1,000): past one, 413 naming ' +
        'the file and the limit, nothing written.',
      consumes: ['multipart/form-data'],
      querystring: FilesQuerySchema,
      body: FilesFormSchema,
      response: {
        202: {
          ...IngestJobSchema, description: 'The files were received; they are read and written as a job: poll `status_url` (also the `Location` header)',
          example: { ...jobExample, documents: { done: 0, total: 0 }, chunks: { done: 0, total: 0 }, rate: { documents_per_second: 0, chunks_per_second: 0 }, eta_seconds: undefined, in_flight: undefined, files: { done: 0, total: 3 }, pages: { done: 0, total: 0 }, file_errors: [], took_ms: 1.2 }
        },
        400: {
          ...ErrorSchema, description: 'Not a multipart form, no file in it, a field other than `files` and `namespace`, a malformed namespace, or two files of the same path',
          example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/namespace must match pattern "^[a-z0-9][a-z0-9_-]{0,62}$" (got "Team A")')
        },
        413: {
          ...ErrorSchema, description: 'A file over INGEST_FILE_MAX_BYTES, the files over INGEST_FILES_MAX_BYTES, or more than INGEST_FILES_MAX_COUNT files (nothing is written)',
          example: errorExample(413, 'RECALL_PAYLOAD_TOO_LARGE', 'Payload Too Large', 'file "scans/ledger-1998.pdf" is larger than 104857600 bytes (INGEST_FILE_MAX_BYTES); nothing of this request was written')
        },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'As many ingest jobs as run at once are running (retry when one has ended)' },
        507: MemoryBudgetResponse
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest },
    // the form is read part by part in the handler, not by the body's schema (which Swagger shows)
    attachValidation: true
  }, async (request, reply) => {
    if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError
    const misfit = checkQuery(request.query)
    if (misfit !== undefined) throw new Errors.badRequest(misfit)
    if (!request.isMultipart()) throw new Errors.badRequest(`the body must be a multipart/form-data form (got ${describeValue(request.headers['content-type'] ?? 'no content type')}): send the files as parts of the field "files"`)
    const root = await mkdtemp(join(tmpdir(), 'recall-upload-'))
    let handed = false
    try {
      const { files, namespace: field } = await receive(request.parts(), root)
      if (files.length === 0) throw new Errors.badRequest('no file in the form: send one or more parts of the field "files", each with a filename')
      const fromQuery = request.query.namespace
      if (field !== undefined) {
        const bad = checkNamespace(field)
        if (bad !== undefined) throw new Errors.badRequest(bad)
        if (fromQuery !== undefined && fromQuery !== field) throw new Errors.badRequest(`the form names namespace ${JSON.stringify(field)} and the query ${JSON.stringify(fromQuery)}: name one`)
        if (!request.mayUseNamespace(field)) throw new NamespaceForbiddenError(JSON.stringify(field))
      }
      const namespace = field ?? fromQuery ?? DEFAULT_NAMESPACE
      const ocr = await app.runtime.ocrReader()
      let job
      try {
        job = app.runtime.ingestJobs.start(namespace, {
          files: files.length,
          read: (progress, signal) => readUploadedFiles(root, files, ocr, progress, signal),
          finish: () => rm(root, { recursive: true, force: true })
        })
      } catch (error) {
        if (error instanceof IngestJobLimitError) throw new Errors.ingestBusy(error.message)
        throw error
      }
      handed = true
      return reply.code(202).header('location', jobUrl(job.id)).send(jobAnswer(job))
    } finally {
      if (!handed) await rm(root, { recursive: true, force: true })
    }
  })

  /** Saves every file part under `root` as it arrives, within the limits; the `namespace` field. */
  async function receive(parts: ReturnType<FastifyRequest['parts']>, root: string) {
    const files: UploadedFile[] = []
    let namespace: string | undefined
    let total = 0
    try {
      for await (const part of parts) {
        if (part.type === 'field') {
          if (part.fieldname !== 'namespace') throw new Errors.badRequest(`body/${part.fieldname} is not a field of this form (it takes "files" and "namespace")`)
          namespace = String(part.value)
          continue
        }
        const name = safeName(part.filename, files.length)
        if (files.some((f) => f.name === name)) throw new Errors.badRequest(`two files named ${JSON.stringify(name)}: each file of a request needs its own path`)
        const path = join(root, name)
        await mkdir(dirname(path), { recursive: true })
        let bytes = 0
        part.file.on('data', (chunk: Buffer) => {
          bytes += chunk.length
        })
        await pipeline(part.file, createWriteStream(path))
        if (part.file.truncated) throw tooLarge(`file ${JSON.stringify(name)} is larger than ${limits.maxFileBytes} bytes (INGEST_FILE_MAX_BYTES); nothing of this request was written`)
        total += bytes
        if (total > limits.maxRequestBytes) throw tooLarge(`the files of this request are larger than ${limits.maxRequestBytes} bytes in all (INGEST_FILES_MAX_BYTES), past ${JSON.stringify(name)}; nothing was written`)
        files.push({ path, name })
      }
    } catch (error) {
      const code = (error as { code?: string }).code
      if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT') throw tooLarge(`more than ${limits.maxFiles} files (INGEST_FILES_MAX_COUNT); nothing was written`)
      if (code === 'FST_FIELDS_LIMIT') throw new Errors.badRequest('more than 10 fields besides the files: the form takes "files" and "namespace"')
      if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' || code === 'FST_PROTO_VIOLATION' || code === 'FST_MULTIPART_PREMATURE_CLOSE' || /multipart|boundary|Part terminated/i.test((error as Error).message ?? '')) {
        if (!(error instanceof Errors.badRequest) && !(error instanceof Errors.filesTooLarge)) throw new Errors.badRequest(`the form cannot be read: ${(error as Error).message}`)
      }
      throw error
    }
    return { files, namespace }
  }
}

export default fileRoutes
