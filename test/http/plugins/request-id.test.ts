import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { addLoggingRoutes, captureLogs } from '../../helpers/log-capture.js'
import requestId, { requestIdServerOptions } from '../../../src/http/plugins/request-id.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function build(): Promise<{ app: FastifyInstance; logs: Array<Record<string, unknown>> }> {
  const { stream, logs } = captureLogs()
  const app = Fastify({ ...requestIdServerOptions(), logger: { level: 'info', stream } })
  apps.push(app)
  await app.register(requestId)
  addLoggingRoutes(app)
  await app.ready()
  return { app, logs }
}

describe('request id', () => {
  it('generates a distinct UUID per request and returns it in x-request-id', async () => {
    const { app } = await build()
    const first = await app.inject({ method: 'GET', url: '/ok' })
    const second = await app.inject({ method: 'GET', url: '/ok' })
    expect(first.headers['x-request-id']).toMatch(UUID)
    expect(second.headers['x-request-id']).toMatch(UUID)
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id'])
  })

  it("keeps an acceptable caller id and logs every line of the request under it", async () => {
    const { app, logs } = await build()
    const response = await app.inject({ method: 'GET', url: '/ok', headers: { 'x-request-id': 'gen-svc:42.a_b' } })
    expect(response.headers['x-request-id']).toBe('gen-svc:42.a_b')
    const lines = logs.filter((line) => line.reqId === 'gen-svc:42.a_b')
    expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'handling', 'request completed'])
  })

  it('replaces a caller id that is too long or has unsafe characters', async () => {
    const { app } = await build()
    for (const given of ['x'.repeat(129), 'has space', 'quote"d', '{"json":1}', '']) {
      const response = await app.inject({ method: 'GET', url: '/ok', headers: { 'x-request-id': given } })
      expect(response.headers['x-request-id'], given).toMatch(UUID)
    }
  })

  it('sets the header on errors and 404s too', async () => {
    const { app, logs } = await build()
    const failed = await app.inject({ method: 'GET', url: '/boom' })
    expect(failed.statusCode).toBe(500)
    expect(failed.headers['x-request-id']).toMatch(UUID)
    expect(logs.some((line) => line.reqId === failed.headers['x-request-id'] && line.level === 50)).toBe(true)
    const missing = await app.inject({ method: 'GET', url: '/nowhere' })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers['x-request-id']).toMatch(UUID)
  })
})
