import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../errors.js'
import { deleteEpisodes, EpisodeIngestError, EpisodesIngestBodySchema, ingestEpisodes } from '../ingest/episodes.js'
import { errorExample, ErrorSchema } from '../schemas/error.js'

/** Start-up steps these routes wait for. */
const STARTUP = ['embedder', 'demo:episodes']

const episodeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app
  const ports = () => ({ graph: services.episodes, vectors: services.vectors, embedder: services.embedder })
  const options = { collectionPrefix: services.config.collectionPrefix }

  app.post('/ingest/episodes', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace Episodes with their facets, points and entities (episodic memory)',
      description: 'The nested form of DESIGN section 7. Edge texts are generated when not given. Idempotent by id; ' +
        'unknown facet or entity references reject the request with a 400 listing them, and nothing is written.',
      body: EpisodesIngestBodySchema,
      response: {
        200: {
          ...Type.Object({
            episodes: Type.Integer(), facets: Type.Integer(), points: Type.Integer(),
            entities: Type.Integer(), edges: Type.Integer(), vectors: Type.Integer()
          }),
          description: 'What was written'
        },
        400: { ...ErrorSchema, description: 'Malformed body or unknown references',
          example: errorExample(400, 'RECALL_INGEST_INVALID', 'Bad Request', 'episodes[2].facets[0].entities[1]: unknown entity "N9"') },
        503: { ...ErrorSchema, description: 'A store or the embedder is down' }
      }
    },
    config: { startup: STARTUP }
  }, async (request) => {
    try {
      const result = await ingestEpisodes(ports(), request.body, options)
      services.episodicChanges.count += 1
      return result
    } catch (error) {
      if (error instanceof EpisodeIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
  })

  app.delete('/episodes/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Delete an Episode with its facets, points and their vectors; shared entities stay',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 512 }) }),
      response: {
        200: { ...Type.Object({ deleted: Type.String() }), description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid id' },
        404: { ...ErrorSchema, description: 'No Episode has this id' },
        503: { ...ErrorSchema, description: 'A store is down' }
      }
    },
    config: { startup: STARTUP }
  }, async (request) => {
    const result = await deleteEpisodes(ports(), [request.params.id], options)
    if (result.deleted.length === 0) throw new Errors.notFound(`no Episode has id "${request.params.id}"`)
    services.episodicChanges.count += 1
    return { deleted: request.params.id }
  })
}

export default episodeRoutes
