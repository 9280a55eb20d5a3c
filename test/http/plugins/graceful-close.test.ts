import Fastify from 'fastify'
import { describe, expect, inject, it } from 'vitest'
import gracefulClose from '../../../src/http/plugins/graceful-close.js'
import metrics from '../../../src/http/plugins/metrics.js'
import requestId, { requestIdServerOptions } from '../../../src/http/plugins/request-id.js'
import security from '../../../src/http/plugins/security.js'
import { createRedisClient } from '../../../src/providers/cache/redis.js'

// server.ts shuts down with app.close() on SIGTERM; with every plugin of this folder registered, that
// must let requests already running finish, refuse new connections, and leave no timer or socket behind.
describe('closing an app with the security, metrics and request-id plugins', () => {
  it('without graceful-close, a keep-alive connection that was busy holds close() open (the problem it solves)', async () => {
    const app = Fastify()
    app.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 300))
      return { done: true }
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const inFlight = fetch(`${base}/slow`).then((r) => r.json())
    await new Promise((resolve) => setTimeout(resolve, 100))
    let closed = false
    const closing = app.close().then(() => {
      closed = true
    })
    expect(await inFlight).toEqual({ done: true })
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(closed).toBe(false) // still waiting on the idle keep-alive socket (Fastify keepAliveTimeout 72 s)
    app.server.closeAllConnections()
    await closing
  })

  it('finishes in-flight requests with Connection: close, then refuses new connections', async () => {
    const redis = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1_000 })
    redis.on('error', () => {})
    const app = Fastify({ ...requestIdServerOptions() })
    await app.register(gracefulClose)
    await app.register(requestId)
    await app.register(security, { apiKeys: ['k'], corsOrigins: ['*'], rateLimit: { max: 1_000, timeWindowMs: 60_000, redis } })
    await app.register(metrics)
    let lastHandlerDone = 0
    app.get('/slow', async () => {
      await new Promise((resolve) => setTimeout(resolve, 300))
      lastHandlerDone = performance.now()
      return { done: true }
    })
    app.addHook('onClose', async () => {
      await redis.quit()
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })

    const inFlight = Promise.all(
      [1, 2, 3].map(() => fetch(`${base}/slow`).then(async (r) => ({ status: r.status, connection: r.headers.get('connection'), body: await r.json() })))
    )
    await new Promise((resolve) => setTimeout(resolve, 100)) // the three requests are now inside the handler
    const closeStarted = performance.now()
    await app.close()
    const closeDone = performance.now()

    expect(await inFlight).toEqual([1, 2, 3].map(() => ({ status: 200, connection: 'close', body: { done: true } })))
    expect(lastHandlerDone).toBeGreaterThan(closeStarted) // the requests really were in flight at close()
    expect(closeDone).toBeGreaterThanOrEqual(lastHandlerDone) // close waited for them
    expect(closeDone - closeStarted).toBeLessThan(5_000) // and did not wait for the keep-alive timeout
    await expect(fetch(`${base}/slow`)).rejects.toThrow()
  })
})
