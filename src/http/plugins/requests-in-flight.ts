import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

interface RequestsInFlightOptions {
  /** Called as each request begins; what it returns is called once as it ends (answered or aborted). */
  begins: () => () => void
}

/** Probes and scrapes: a release need not wait for them, and they come often enough to put it off forever. */
const UNCOUNTED_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics'])

const ends = Symbol('recall.requests-in-flight.ends')
type Counted = FastifyRequest & { [ends]?: () => void }

/**
 * Tells the process which requests are in flight (src/memory/heap-release.ts: the heap release pauses the whole process,
 * so it waits for none to be).
 */
const requestsInFlight: FastifyPluginAsync<RequestsInFlightOptions> = async (app, options) => {
  app.addHook('onRequest', (request: Counted, _reply, done) => {
    const url = request.routeOptions.url
    if (url === undefined || !UNCOUNTED_ROUTES.has(url)) request[ends] = options.begins()
    done()
  })
  const end = (request: Counted, _reply: unknown, done: () => void) => {
    request[ends]?.()
    done()
  }
  app.addHook('onResponse', end)
  app.addHook('onRequestAbort', (request: Counted, done) => end(request, undefined, done))
}

export default fp(requestsInFlight, { name: 'recall-requests-in-flight', fastify: '5.x' })
