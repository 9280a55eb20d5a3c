import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { demoDir } from '../../corpus/demo.js'

/** OpenAPI document from the route schemas, Swagger UI at /docs and the raw document at /openapi.json. */
export default fp(async function swaggerPlugin(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'recall',
        version: '0.1.0',
        description: 'Multi-mode retrieval: `hybrid` (dense vectors + BM25, fused by default as a convex combination of per-query ' +
          'min-max normalised leg scores with alpha 0.5; `fusion: rrf` fuses by Reciprocal Rank Fusion, k 60), ' +
          '`graphrag` (entity-neighbour lookup) ' +
          'and `episodic` (episodic bundle search). Every mode returns the same recall bundle of ' +
          '`{id, text, score, source, mode, metadata}`; `metadata` explains why each item is there.'
      },
      tags: [
        { name: 'retrieve', description: 'Ask a question in one mode' },
        { name: 'ingest', description: 'Add, replace, list and delete content' },
        { name: 'analyze', description: 'See what the lexical analyzer makes of a text' },
        { name: 'operations', description: 'Health and readiness' }
      ]
    }
  })
  // `/docs/?compare=<JSON>` opens POST /retrieve/compare with that body (the /demo page's "open in Swagger UI").
  const prefill = await readFile(`${demoDir()}page/swagger-prefill.js`, 'utf8')
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: { js: [{ filename: 'compare-prefill.js', content: prefill }] }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}, { name: 'recall-swagger', fastify: '5.x' })
