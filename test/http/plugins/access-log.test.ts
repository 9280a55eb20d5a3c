import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { addLoggingRoutes, captureLogs } from '../../helpers/log-capture.js'
import accessLog, { accessLogServerOptions } from '../../../src/http/plugins/access-log.js'
import requestId, { requestIdServerOptions } from '../../../src/http/plugins/request-id.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function build(level = 'info'): Promise<{ app: FastifyInstance; logs: Array<Record<string, unknown>> }> {
  const { stream, logs } = captureLogs()
  const app = Fastify({ ...requestIdServerOptions(), ...accessLogServerOptions(), logger: { level, stream } })
  apps.push(app)
  await app.register(requestId)
  await app.register(accessLog)
  addLoggingRoutes(app)
  await app.ready()
  return { app, logs }
}

describe('access log', () => {
  it('writes exactly one line per request, after it, under the request id', async () => {
    const { app, logs } = await build()
    await app.inject({ method: 'GET', url: '/ok?q=%E5%92%B3', headers: { 'x-request-id': 'caller-7' } })
    const lines = logs.filter((line) => line.reqId === 'caller-7')
    expect(lines.map((line) => line.msg)).toEqual(['handling', 'request completed'])
    expect(lines[1]).toMatchObject({ level: 30, method: 'GET', url: '/ok?q=%E5%92%B3', statusCode: 200 })
    expect(typeof lines[1]?.ms).toBe('number')
    expect(logs.some((line) => line.msg === 'incoming request')).toBe(false)
  })

  it('logs failures and unknown routes with their status', async () => {
    const { app, logs } = await build()
    await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'b-1' } })
    await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'n-1' } })
    expect(logs.find((line) => line.reqId === 'b-1' && line.msg === 'request completed')).toMatchObject({ statusCode: 500 })
    expect(logs.find((line) => line.reqId === 'n-1' && line.msg === 'request completed')).toMatchObject({ statusCode: 404 })
  })

  it('writes nothing at LOG_LEVEL warn', async () => {
    const { app, logs } = await build('warn')
    await app.inject({ method: 'GET', url: '/ok' })
    expect(logs).toEqual([])
  })
})
