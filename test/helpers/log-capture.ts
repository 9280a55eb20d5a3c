import type { FastifyInstance } from 'fastify'
import { Writable } from 'node:stream'

/** A stream for a Fastify/pino logger that parses every JSON line it is given into `logs`. */
export function captureLogs(): { stream: Writable; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line) as Record<string, unknown>)
      done()
    }
  })
  return { stream, logs }
}

/** Two routes for logging tests: GET /ok logs `handling` and answers `{ok: true}`; GET /boom throws. */
export function addLoggingRoutes(app: FastifyInstance): void {
  app.get('/ok', async (request) => {
    request.log.info('handling')
    return { ok: true }
  })
  app.get('/boom', async () => {
    throw new Error('boom')
  })
}
