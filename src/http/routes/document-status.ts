/** A document's index status, and the rebuild of its indexes (docs/api.md, "Index status"). */
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { CHANNELS, type Channel } from '../../corpus/index-status/channels.js'
import { RebuildRefusedError } from '../../corpus/write-path.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema, NamespaceSchema } from '../../schemas/common.js'
import { errorExample, ErrorSchema, ModelMismatchResponse } from '../../schemas/error.js'
import { GenerationSchema, MinGenerationSchema, ReadGenerationSchema, staleReplicaExample } from '../../schemas/generation.js'
import { DocumentIndexStatusSchema, documentStatusExample } from '../../schemas/index-status.js'
import { DocumentIdSchema } from '../../schemas/ingest.js'
import { namespaceOfRequest } from '../plugins/security.js'

const STARTUP: readonly StartupStep[] = ['documents', 'demo:documents']
const WRITES: readonly StartupStep[] = [...STARTUP, ...WRITE_STEPS]

const RebuildCountsSchema = Type.Object({
  documents: Type.Integer({ minimum: 0, description: 'Documents rebuilt.' }),
  chunks: Type.Optional(Type.Integer({ minimum: 0, description: 'Chunk channels: chunks written again.' })),
  items: Type.Optional(Type.Integer({ minimum: 0, description: 'Derived channels: what the documents have there now (`entity_vectors`: the names of their entities that have a vector).' }))
})

const documentStatusRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/documents/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'One document: its catalog entry and the status of each of its indexes',
      description: 'Per channel (`vectors`, `lexical`, `derived_graph`, `derived_episodes`, `entity_vectors`): `done`, `pending` (not built yet, or ' +
        'no longer: `POST /documents/{id}/rebuild` restores it), `failed` (its last derivation failed, `reason` says why: an LLM ' +
        'extractor that timed out, a store error) or `off` (this service does not build it, `reason` names the setting), with ' +
        'chunk counts (indexed of stored) or derived item counts (now, and what its last derivation wrote). Read from the shared ' +
        'stores, so every replica answers alike.',
      params: Type.Object({ id: DocumentIdSchema }),
      querystring: Type.Object({ ...NamespaceQuerySchema.properties, min_generation: Type.Optional(MinGenerationSchema) }, { additionalProperties: false }),
      response: {
        200: {
          ...Type.Object({
            namespace: Type.String(), id: Type.String(), title: Type.Optional(Type.String()), source: Type.String(),
            chunks: Type.Integer({ minimum: 0, description: 'Chunks the catalog stores.' }),
            index_status: DocumentIndexStatusSchema, generation: Type.Optional(ReadGenerationSchema)
          }),
          description: 'The document and its index status',
          example: { namespace: 'default', id: 'oncall', title: '值班说明', source: 'ops/oncall.md', chunks: 4, index_status: documentStatusExample, generation: 1764580000000042 }
        },
        400: { ...ErrorSchema, description: 'Not a valid document id or namespace' },
        404: { ...ErrorSchema, description: 'No document of the namespace has this id', example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'no document of namespace "default" has id "oncal"') },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store is down, or this replica has not seen `min_generation` in time', example: staleReplicaExample }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { id } = request.params
    const { generation } = await app.runtime.corpus.readState('hybrid', namespace, request.query.min_generation)
    const status = (await app.runtime.corpus.status.ofDocuments(namespace, [id])).get(id)
    const summary = app.runtime.corpus.documents.get(namespace)?.summary(id)
    if (!status || !summary) throw new Errors.notFound(`no document of namespace "${namespace}" has id "${id}"`)
    return { namespace, ...summary, index_status: status, ...(generation !== undefined ? { generation } : {}) }
  })

  app.post('/documents/:id/rebuild', {
    schema: {
      tags: ['ingest'],
      summary: 'Rebuild some indexes of a document from its stored chunks',
      description: `\`channels\` names the indexes to build again (${CHANNELS.map((c) => `\`${c}\``).join(', ')}), from the chunks ` +
        'the vector store holds: no re-parse, and no embedding unless `vectors` is named (`lexical` alone writes the stored ' +
        'vectors back and indexes the texts). A derived channel is derived again (with LLM_EXTRACTION, chunks the LLM has no ' +
        'answer for are asked again). `entity_vectors` runs the namespace\'s background entity-names write now and waits for it: ' +
        'names its graph holds and the collection lacks are embedded, names no entity holds any more go. Through the write path: journalled, under the namespace\'s locks, recorded (answers the ' +
        'generation). Answers what was rebuilt with its counts.',
      params: Type.Object({ id: DocumentIdSchema }),
      body: Type.Object({
        namespace: Type.Optional(NamespaceSchema),
        channels: Type.Array(Type.String(), { minItems: 1, maxItems: CHANNELS.length, description: `The channels to rebuild: ${CHANNELS.join(', ')}.` })
      }, { additionalProperties: false }),
      response: {
        200: {
          ...Type.Object({
            namespace: Type.String(), id: Type.String(),
            rebuilt: Type.Object(Object.fromEntries(CHANNELS.map((c) => [c, Type.Optional(RebuildCountsSchema)])), { description: 'Per channel named, what was rebuilt.' }),
            generation: Type.Optional(GenerationSchema)
          }),
          description: 'Rebuilt',
          example: { namespace: 'default', id: 'oncall', rebuilt: { lexical: { documents: 1, chunks: 4 }, derived_graph: { documents: 1, items: 31 } }, generation: 1764580000000043 }
        },
        400: { ...ErrorSchema, description: 'A channel that is not one, a channel this service does not build, or a malformed id or namespace', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/channels: "vector", "bm25" are not channels; the channels are vectors, lexical, derived_graph, derived_episodes, entity_vectors') },
        404: { ...ErrorSchema, description: 'No document of the namespace has this id' },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store or the embedder is down; run it again' }
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.body.namespace ?? DEFAULT_NAMESPACE
    const { id } = request.params
    const unknown = request.body.channels.filter((c) => !(CHANNELS as readonly string[]).includes(c))
    if (unknown.length > 0) {
      throw new Errors.badRequest(`body/channels: ${unknown.map((c) => JSON.stringify(c)).join(', ')} ${unknown.length > 1 ? 'are not channels' : 'is not a channel'}; the channels are ${CHANNELS.join(', ')}`)
    }
    const channels = [...new Set(request.body.channels)] as Channel[]
    await app.runtime.corpus.catchUp(namespace)
    if (!app.runtime.corpus.documents.get(namespace)?.has(id)) throw new Errors.notFound(`no document of namespace "${namespace}" has id "${id}"`)
    let written
    try {
      written = await app.runtime.corpus.write(namespace, { kind: 'rebuild', op: 'rebuild', ids: [id], channels })
    } catch (error) {
      if (error instanceof RebuildRefusedError) throw new Errors.badRequest(`body/${error.message}`)
      throw error
    }
    // deleted by another writer between the check and the write
    if (written.missing.length > 0) throw new Errors.notFound(`no document of namespace "${namespace}" has id "${id}"`)
    return { namespace, id, rebuilt: written.rebuilt, ...(written.generation !== undefined ? { generation: written.generation } : {}) }
  })
}

export default documentStatusRoutes
