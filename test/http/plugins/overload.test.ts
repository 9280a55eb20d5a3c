import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import type { EmbeddingBacklog } from '../../../src/providers/embedder/port.js'
import overload, { type OverloadOptions } from '../../../src/http/plugins/overload.js'

const apps: FastifyInstance[] = []
let stopBlocking: (() => void) | undefined
afterEach(async () => {
  stopBlocking?.()
  stopBlocking = undefined
  for (const app of apps.splice(0)) await app.close()
})

const ok = async () => ({ ok: true })

async function build(options: OverloadOptions): Promise<FastifyInstance> {
  const app = Fastify()
  apps.push(app)
  await app.register(overload, options)
  app.get('/retrieve', ok)
  app.get('/embeds', async () => {
    app.overload.checkEmbedding()
    return { ok: true }
  })
  for (const url of ['/healthz', '/readyz', '/metrics']) app.get(url, ok)
  await app.ready()
  return app
}

const busyWait = (ms: number): void => {
  const until = performance.now() + ms
  while (performance.now() < until) { /* a synchronous stall, as CPU-bound work causes */ }
}

/** Keeps the event loop blocked `blockMs` out of every `blockMs + 5` ms, until stopped. */
function blockContinuously(blockMs: number): void {
  let stopped = false
  const tick = (): void => {
    if (stopped) return
    busyWait(blockMs)
    setTimeout(tick, 5)
  }
  tick()
  stopBlocking = () => { stopped = true }
}

const waitFor = async (condition: () => boolean, ms: number): Promise<boolean> => {
  const until = Date.now() + ms
  while (!condition() && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
  return condition()
}

describe('overload: requests in flight', () => {
  it('refuses past maxInFlight with 503 RECALL_OVERLOADED naming the figure, never probes and scrapes, and admits again once answered', async () => {
    const app = Fastify()
    apps.push(app)
    await app.register(overload, { maxInFlight: 2 })
    const gates: Array<() => void> = []
    app.get('/slow', () => new Promise((resolve) => gates.push(() => resolve({ ok: true }))))
    app.get('/retrieve', ok)
    for (const url of ['/healthz', '/readyz', '/metrics']) app.get(url, ok)
    await app.ready()

    const slow = [app.inject({ method: 'GET', url: '/slow' }), app.inject({ method: 'GET', url: '/slow' })]
    expect(await waitFor(() => gates.length === 2, 5_000)).toBe(true)
    expect(app.overload.figures().inFlight).toBe(2)

    const refused = await app.inject({ method: 'GET', url: '/retrieve' })
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ statusCode: 503, code: 'RECALL_OVERLOADED', error: 'Service Unavailable' })
    expect(refused.json().message).toContain('2 requests in flight, limit 2')
    for (const url of ['/healthz', '/readyz', '/metrics']) expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200)

    for (const open of gates) open()
    await Promise.all(slow)
    expect(app.overload.figures().inFlight).toBe(0)
    expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
  })

  it('a refused request is not counted in flight', async () => {
    const app = await build({ maxInFlight: 1 })
    // Nothing in flight: every request is admitted and released, so the count returns to 0.
    for (let i = 0; i < 5; i++) expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
    expect(app.overload.figures().inFlight).toBe(0)
  })
})

describe('overload: the embedding queue', () => {
  it('refuses work that embeds when the queue is too long or a new entry would wait too long, and nothing else', async () => {
    let backlog: EmbeddingBacklog = { queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 }
    const app = await build({ maxEmbeddingQueue: 10, maxEmbeddingWaitMs: 500, embeddingBacklog: () => backlog })
    expect((await app.inject({ method: 'GET', url: '/embeds' })).statusCode).toBe(200)

    backlog = { queued: 10, oldestWaitMs: 20, expectedWaitMs: 5 }
    const long = await app.inject({ method: 'GET', url: '/embeds' })
    expect(long.statusCode).toBe(503)
    expect(long.json().message).toContain('10 query embeddings queued, limit 10')
    expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)

    backlog = { queued: 3, oldestWaitMs: 900, expectedWaitMs: 750 }
    const slow = await app.inject({ method: 'GET', url: '/embeds' })
    expect(slow.statusCode).toBe(503)
    expect(slow.json().message).toContain('a query embedding would wait about 750 ms for the model, limit 500')

    backlog = { queued: 9, oldestWaitMs: 2_000, expectedWaitMs: 499 }
    expect((await app.inject({ method: 'GET', url: '/embeds' })).statusCode).toBe(200)
  })
})

describe('overload: sustained event-loop delay', () => {
  // Limits far above what a merely busy machine shows (tens of ms), far below the stalls made here.
  const options = { maxEventLoopDelayMs: 100, eventLoopDelaySamples: 3, sampleIntervalMs: 200 }

  it('one long stall is not overload', async () => {
    const app = await build(options)
    busyWait(1_000)
    // Several samples after the stall: at most one of them saw it.
    await new Promise((r) => setTimeout(r, 1_000))
    expect(app.overload.figures().sustainedSamples).toBeLessThan(3)
    expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
  })

  it('a delay sustained over the samples is, and it passes once the loop is free again', async () => {
    const app = await build(options)
    blockContinuously(300)
    expect(await waitFor(() => app.overload.figures().sustainedSamples >= 3, 20_000)).toBe(true)
    const refused = await app.inject({ method: 'GET', url: '/retrieve' })
    expect(refused.statusCode).toBe(503)
    expect(refused.json().message).toMatch(/event loop delayed \d+ ms on average for \d+ samples in a row/)
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    stopBlocking!()
    expect(await waitFor(() => app.overload.figures().sustainedSamples === 0, 10_000)).toBe(true)
    expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
  })

  it('is not sampled before start-up is over', async () => {
    let started = false
    const app = await build({ ...options, started: () => started })
    blockContinuously(300)
    await new Promise((r) => setTimeout(r, 2_500))
    expect(app.overload.figures().sustainedSamples).toBe(0)
    expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
    started = true
    expect(await waitFor(() => app.overload.figures().sustainedSamples >= 3, 20_000)).toBe(true)
  })
})
