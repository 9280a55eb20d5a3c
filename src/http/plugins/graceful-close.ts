import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Lets `app.close()` finish promptly with keep-alive clients. Fastify stops accepting and lets
 * in-flight requests complete, but Node closes only the connections that are idle at that moment:
 * a connection whose request was still running stays open after its response until the keep-alive
 * timeout (72 s in Fastify), and the close waits for it. Answering `Connection: close` from the
 * moment closing starts makes each such connection end right after its last response.
 */
const gracefulClose: FastifyPluginAsync = async (app) => {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(gracefulClose, { name: 'recall-graceful-close', fastify: '5.x' })
