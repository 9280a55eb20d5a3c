import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks'
import createError from '@fastify/error'
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { EmbeddingBacklog } from '../../providers/embedder/port.js'
import { ErrorSchema } from '../../schemas/error.js'
import { documentErrorResponses, type DocumentedError } from './document-errors.js'

const OverloadedError = createError('RECALL_OVERLOADED', 'The service is overloaded (%s), retry later', 503)

export interface OverloadOptions {
  /** Requests answered at once (probes and scrapes excluded) past which a new one gets 503. Default 512; 0 is off. */
  maxInFlight?: number
  /** Query embeddings waiting for the model past which a request that embeds gets 503. Default 256; 0 is off. */
  maxEmbeddingQueue?: number
  /**
   * How long a query embedding queued now would wait, in milliseconds, past which a request that embeds
   * gets 503: set it below the embedding timeout, so that accepted work can still finish in time (work that
   * cannot only adds to the queue). Default 1,000; 0 is off.
   */
  maxEmbeddingWaitMs?: number
  /** Mean event-loop delay per sample, in milliseconds, that counts as overloaded when sustained. Default 1,000; 0 is off. */
  maxEventLoopDelayMs?: number
  /** How many samples in a row must exceed `maxEventLoopDelayMs`. Default 5 (5 s): one long stall is not overload. */
  eventLoopDelaySamples?: number
  /** Sampling period in milliseconds. Default 1,000. */
  sampleIntervalMs?: number
  /** Event-loop utilisation (0..1) past which requests get 503, sustained as the delay is. Default 0 (off). */
  maxEventLoopUtilization?: number
  /** Heap used, in bytes, past which requests get 503. Default 0 (off). */
  maxHeapBytes?: number
  /** Resident set size, in bytes, past which requests get 503. Default 0 (off). */
  maxRssBytes?: number
  /** The embedding queue of the model, when it has one. */
  embeddingBacklog?: () => EmbeddingBacklog | undefined
  /**
   * Whether the service's start-up work is over (or only waits to retry). Until then event-loop figures are
   * not sampled: loading the model and building the indexes stall the loop by design, and that is not
   * overload. Default: always over.
   */
  started?: () => boolean
}

/** The figures the guard decides on. */
interface OverloadFigures {
  inFlight: number
  /** Mean event-loop delay over the last sample, in milliseconds. */
  eventLoopDelayMs: number
  /** Samples in a row past the event-loop limits. */
  sustainedSamples: number
  embedding?: EmbeddingBacklog
}

interface OverloadGuard {
  /**
   * Throws OverloadedError when the embedding queue is past its limits. Called just before work that
   * embeds a query, so requests that need no model (another mode, a cached answer) still pass.
   */
  checkEmbedding(): void
  figures(): OverloadFigures
}

declare module 'fastify' {
  interface FastifyInstance {
    overload: OverloadGuard
  }
}

/** Route URLs that are never refused (liveness, readiness, scrapes). */
const EXEMPT_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics'])

/** The 503 this plugin documents on every route it may refuse. */
const OVERLOADED: DocumentedError = {
  description: 'Overloaded or starting, see Retry-After; or a backend this route needs is down (the message names it)',
  code: 'RECALL_OVERLOADED',
  error: 'Service Unavailable',
  message: new OverloadedError('512 requests in flight, limit 512').message
}

const counted = Symbol('recall.overload.counted')
type Counted = FastifyRequest & { [counted]?: boolean }

/**
 * Sheds load only on measures that mean this service cannot keep up: requests in flight, the embedding
 * queue's length and wait, and event-loop delay sustained over several samples (never during start-up).
 * A refused request gets 503 `RECALL_OVERLOADED` with the reason (the app's error handler adds
 * `Retry-After` to every 503); probes and scrapes are never refused. Both in-flight and queue limits bound memory: nothing queues without limit.
 */
const overload: FastifyPluginAsync<OverloadOptions> = async (app, options) => {
  const maxInFlight = options.maxInFlight ?? 512
  const maxQueue = options.maxEmbeddingQueue ?? 256
  const maxWaitMs = options.maxEmbeddingWaitMs ?? 1_000
  const maxDelayMs = options.maxEventLoopDelayMs ?? 1_000
  const samplesNeeded = options.eventLoopDelaySamples ?? 5
  const maxElu = options.maxEventLoopUtilization ?? 0
  const maxHeap = options.maxHeapBytes ?? 0
  const maxRss = options.maxRssBytes ?? 0
  const started = options.started ?? (() => true)
  const resolutionMs = 10

  let inFlight = 0
  let delayMs = 0
  let sustained = 0
  let memoryReason: string | undefined
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs })
  histogram.enable()
  let elu: EventLoopUtilization = performance.eventLoopUtilization()

  const intervalMs = options.sampleIntervalMs ?? 1_000
  let lastSampleAt = performance.now()
  const sample = (): void => {
    const now = performance.now()
    const nextElu = performance.eventLoopUtilization()
    const utilisation = performance.eventLoopUtilization(nextElu, elu).utilization
    elu = nextElu
    // A loop blocked without a pause starves the histogram's own timer (it records nothing), so this
    // timer's lateness counts too.
    const lateness = Math.max(0, now - lastSampleAt - intervalMs)
    lastSampleAt = now
    const mean = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - resolutionMs) : 0
    delayMs = Math.max(mean, lateness)
    histogram.reset()
    if (!started()) {
      sustained = 0
      return
    }
    const slow = (maxDelayMs > 0 && delayMs > maxDelayMs) || (maxElu > 0 && utilisation > maxElu)
    sustained = slow ? sustained + 1 : 0
    const memory = maxHeap > 0 || maxRss > 0 ? process.memoryUsage() : undefined
    memoryReason = memory && maxHeap > 0 && memory.heapUsed > maxHeap
      ? `heap used ${memory.heapUsed} bytes, limit ${maxHeap}`
      : memory && maxRss > 0 && memory.rss > maxRss ? `resident memory ${memory.rss} bytes, limit ${maxRss}` : undefined
  }
  const timer = setInterval(sample, intervalMs)
  timer.unref()
  app.addHook('onClose', async () => {
    clearInterval(timer)
    histogram.disable()
  })

  const refusal = (): string | undefined => {
    if (maxInFlight > 0 && inFlight >= maxInFlight) return `${inFlight} requests in flight, limit ${maxInFlight}`
    if (sustained >= samplesNeeded) return `event loop delayed ${Math.round(delayMs)} ms on average for ${sustained} samples in a row`
    return memoryReason
  }

  const release = (request: Counted): void => {
    if (!request[counted]) return
    request[counted] = false
    inFlight -= 1
  }

  app.addHook('onRequest', async (request: Counted) => {
    const url = request.routeOptions.url
    if (url !== undefined && EXEMPT_ROUTES.has(url)) return
    const reason = refusal()
    if (reason !== undefined) throw new OverloadedError(reason)
    request[counted] = true
    inFlight += 1
  })
  app.addHook('onResponse', async (request: Counted) => release(request))
  app.addHook('onRequestAbort', async (request: Counted) => release(request))

  const guard: OverloadGuard = {
    checkEmbedding() {
      const backlog = options.embeddingBacklog?.()
      if (!backlog) return
      if (maxQueue > 0 && backlog.queued >= maxQueue) {
        throw new OverloadedError(`${backlog.queued} query embeddings queued, limit ${maxQueue}`)
      }
      if (maxWaitMs > 0 && backlog.expectedWaitMs > maxWaitMs) {
        throw new OverloadedError(`a query embedding would wait about ${Math.round(backlog.expectedWaitMs)} ms for the model, limit ${maxWaitMs}`)
      }
    },
    figures() {
      const embedding = options.embeddingBacklog?.()
      return { inFlight, eventLoopDelayMs: delayMs, sustainedSamples: sustained, ...(embedding ? { embedding } : {}) }
    }
  }
  app.decorate('overload', guard)

  // The 503 (in the error shape) on the response schemas of routes registered after it, exempt ones aside.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.method === 'OPTIONS' || route.schema?.hide === true || EXEMPT_ROUTES.has(route.url)) return
    documentErrorResponses(route, ErrorSchema, [['503', OVERLOADED]])
  })
}

/** Load shedding on real overload, with the figures it decides on. */
export default fp(overload, { name: 'recall-overload', fastify: '5.x' })
