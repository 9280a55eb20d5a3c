/** `GET /images/{id}`: the bytes of a document's picture, as `image_items[].url` names it (docs/api.md, "Pictures"). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import type { StartupStep } from '../../kernel/startup-steps.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'
import { namespaceOfRequest } from '../plugins/security.js'

const STARTUP: readonly StartupStep[] = ['documents', 'demo:documents']

const imageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/images/:id', {
    schema: {
      tags: ['retrieve'],
      summary: 'The bytes of a document\'s picture',
      description: 'A picture answered in `image_items` (`include_images` of `/retrieve` and `/context`), as stored: the picture sent, or ' +
        'its WebP thumbnail past IMAGE_MAX_STORED_BYTES. The content type is told by the bytes\' magic number.',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 300, description: 'The picture\'s id, `<doc id>#img-<16 hex>` (percent-encode the `#`).' }) }),
      querystring: NamespaceQuerySchema,
      response: {
        200: { type: 'string', format: 'binary', description: 'The picture (image/png, image/jpeg, image/gif, image/webp, image/tiff, image/bmp or image/avif)' },
        400: { ...ErrorSchema, description: 'A malformed namespace', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'querystring/namespace must match pattern "^[a-z0-9][a-z0-9_-]{0,62}$" (got "")') },
        404: { ...ErrorSchema, description: 'No such picture in the namespace', example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'no picture "guide#img-0123456789abcdef" in namespace "default"') }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request, reply) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const image = await app.runtime.corpus.image(namespace, request.params.id)
    if (!image) throw new Errors.notFound(`no picture "${request.params.id}" in namespace "${namespace}"`)
    // a Buffer is sent as it is, never serialised; the schema's string type only describes it
    return reply.type(image.contentType).header('cache-control', 'private, max-age=3600').send(image.bytes as unknown as string)
  })
}

export default imageRoutes
