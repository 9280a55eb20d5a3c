import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsync, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'

export interface RequestIdOptions {
  /** Header read from the caller and set on every response. Default `x-request-id`. */
  header?: string
}

// A caller's id is kept only if it is short and plain, so it cannot forge or break log lines.
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Server options to spread into `Fastify({...})` (a plugin cannot set them): every request gets
 * the caller's `x-request-id` when it is acceptable, else a random UUID, and pino logs it as
 * `reqId` (Fastify's label; renaming it goes through `logController` since Fastify 5.x deprecated
 * the top-level `requestIdLogLabel`).
 */
export function requestIdServerOptions(
  options: RequestIdOptions = {}
): Required<Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'>> {
  const header = (options.header ?? 'x-request-id').toLowerCase()
  return {
    // false: Fastify would otherwise take the header verbatim without calling genReqId.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers[header]
      return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID()
    }
  }
}

const requestId: FastifyPluginAsync<RequestIdOptions> = async (app, options) => {
  const header = (options.header ?? 'x-request-id').toLowerCase()
  // Set when the request arrives, so every answer (errors and 404s included) carries the id its log
  // lines have; a synchronous hook costs less than an async onSend on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(header, request.id)
    done()
  })
}

/** Returns the request id in a response header. Pair with `requestIdServerOptions()`. */
export default fp(requestId, { name: 'recall-request-id', fastify: '5.x' })
