import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { MODE_DEFINITIONS } from '../../modes.js'
import { createRecallMetrics, serveGauges, type MetricsGauges, type RecallMetrics, type RecallMetricsOptions } from '../../metrics.js'


declare module 'fastify' {
  interface FastifyInstance {
    metrics: RecallMetrics
  }
}

export interface MetricsOptions extends RecallMetricsOptions {
  /** The metrics to serve and feed (the services', gauges included); default new ones of these options. */
  metrics?: RecallMetrics
  /** What the gauges of new metrics read (with `metrics` given, its own gauges serve). */
  gauges?: MetricsGauges
  /** Values accepted as the `mode` label; anything else is recorded as `none`. Default every registered mode (src/modes.ts). */
  modes?: readonly string[]
  /** URL of the scrape route. Default `/metrics`. */
  url?: string
}

function modeOf(request: FastifyRequest, modes: ReadonlySet<string>): string {
  // Read after validation, so a valid request's mode is already known; a bad one counts as `none`.
  const fromBody = (request.body as { mode?: unknown } | undefined)?.mode
  const fromQuery = (request.query as { mode?: unknown } | undefined)?.mode
  const mode = typeof fromBody === 'string' ? fromBody : fromQuery
  return typeof mode === 'string' && modes.has(mode) ? mode : 'none'
}

const metrics: FastifyPluginAsync<MetricsOptions> = async (app, options) => {
  const modes = new Set(options.modes ?? MODE_DEFINITIONS.map((d) => d.name))
  const recorder = options.metrics ?? withGauges(createRecallMetrics(options), options.gauges ?? {})
  const { registry } = recorder
  app.decorate('metrics', recorder)

  app.addHook('onResponse', (request, reply, done) => {
    // The route pattern, never the raw URL, keeps the label set bounded.
    recorder.observeRequest(request.routeOptions.url ?? 'unmatched', modeOf(request, modes), reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  const schema = {
    summary: 'Prometheus metrics',
    description: 'Request, leg, cache and backend-error metrics in the Prometheus text format 0.0.4.',
    produces: ['text/plain'],
    response: { 200: { type: 'string', description: 'Prometheus text exposition' } }
  }
  app.get(options.url ?? '/metrics', { schema }, async (_request, reply) => {
    const body = await registry.metrics()
    return reply.type(registry.contentType).send(body)
  })
}

function withGauges(recorder: RecallMetrics, gauges: MetricsGauges): RecallMetrics {
  serveGauges(recorder, gauges)
  return recorder
}

/** Prometheus metrics on a registry of the app's own, served at `GET /metrics`. */
export default fp(metrics, { name: 'recall-metrics', fastify: '5.x' })
