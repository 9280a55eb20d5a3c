import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'

const BackendHealthSchema = Type.Object({
  backend: Type.String(),
  ok: Type.Boolean(),
  latency_ms: Type.Number(),
  detail: Type.Optional(Type.String())
})

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      summary: 'The process is alive',
      response: { 200: { ...Type.Object({ status: Type.Literal('ok') }), description: 'Alive' } }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      summary: 'Every configured backend is reachable',
      response: {
        200: { ...Type.Object({ ready: Type.Boolean(), backends: Type.Array(BackendHealthSchema) }), description: 'All backends answer' },
        503: { ...Type.Object({ ready: Type.Boolean(), backends: Type.Array(BackendHealthSchema) }), description: 'At least one backend does not answer' }
      }
    }
  }, async (_request, reply) => {
    const backends = await app.services.health()
    const ready = backends.every((b) => b.ok)
    return reply.code(ready ? 200 : 503).send({ ready, backends })
  })
}

export default healthRoutes
