import createError from '@fastify/error'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { StartupStep } from '../../kernel/startup-steps.js'
import type { Startup } from '../../startup.js'

const StartingError = createError('RECALL_STARTING', 'recall is starting, waiting for %s; retry later', 503)

/** The start-up steps a route needs: fixed, or read from the validated request (the retrieval mode). */
type StartupNeeds = readonly StartupStep[] | ((request: FastifyRequest) => readonly StartupStep[])

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Start-up steps this route waits for; while one of them holds requests back, the route answers 503. */
    startup?: StartupNeeds
  }
}

interface StartupGateOptions {
  startup: Startup
}

/**
 * Answers 503 `RECALL_STARTING` (the error handler adds `Retry-After`) on a route whose start-up steps
 * are not there yet, saying which and how far they got. Runs after validation, so a bad request is
 * still a 400, and the retrieval mode is known.
 */
const startupGate: FastifyPluginAsync<StartupGateOptions> = async (app, { startup }) => {
  app.addHook('preHandler', async (request) => {
    const needs = request.routeOptions.config.startup
    if (needs !== undefined) assertStarted(startup, typeof needs === 'function' ? needs(request) : needs)
  })
}

/** Throws `StartingError` naming the steps among `needs` that still hold requests back. */
export function assertStarted(startup: Startup, needs: readonly StartupStep[]): void {
  if (startup.done) return
  const blocking = startup.blocking(needs)
  if (blocking.length > 0) throw new StartingError(blocking.map((s) => `${s.name} (${s.detail})`).join('; '))
}

export default fp(startupGate, { name: 'recall-startup-gate', fastify: '5.x' })
