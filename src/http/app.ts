import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import { STATUS_CODES } from 'node:http'
import { EpisodicOptionError } from '../../adapters/episodic/index.js'
import { AllLegsFailedError } from '../../adapters/hybrid/index.js'
import { Errors } from '../errors.js'
import { StaleReplicaError } from '../generations.js'
import { legBackendsOf } from '../modes.js'
import { clientErrorHandler } from './client-error.js'
import accessLog, { accessLogServerOptions } from './plugins/access-log.js'
import gracefulClose from './plugins/graceful-close.js'
import metrics from './plugins/metrics.js'
import overload from './plugins/overload.js'
import requestsInFlight from './plugins/requests-in-flight.js'
import requestId, { requestIdServerOptions } from './plugins/request-id.js'
import security from './plugins/security.js'
import startupGate from './plugins/startup-gate.js'
import swaggerPlugin from './plugins/swagger.js'
import { ErrorSchema, type ErrorBody } from '../schemas/error.js'
import { AJV_OPTIONS, schemaErrorMessage } from '../schemas/validation.js'
import type { Logger } from 'pino'
import { BackendTimeoutError, BackendUnavailableError, ProviderError } from '../providers/errors.js'
import analyzeRoutes from './routes/analyze.js'
import compareRoutes from './routes/compare.js'
import contextRoutes from './routes/context.js'
import demoPage from './routes/demo-page.js'
import ingestJobRoutes from './routes/ingest-jobs.js'
import documentRoutes from './routes/documents.js'
import fileRoutes from './routes/files.js'
import documentStatusRoutes from './routes/document-status.js'
import episodeRoutes from './routes/episodes.js'
import conversationRoutes from './routes/conversations.js'
import graphRoutes from './routes/graph.js'
import healthRoutes from './routes/health.js'
import imageRoutes from './routes/images.js'
import mcpRoutes from './routes/mcp.js'
import namespaceRoutes from './routes/namespaces.js'
import retrieveRoutes from './routes/retrieve.js'
import type { Runtime } from '../runtime.js'
import evaluateRoutes from './routes/evaluate.js'
import retrievalDefaultsRoutes from './routes/retrieval-defaults.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What the routes read and call (src/runtime.ts): modes, corpus, start-up, health, metrics. */
    runtime: Runtime
    /** The error answer for a failure, as the error handler sends it; counts and logs it the same way. */
    errorAnswer(error: FastifyError, log: FastifyBaseLogger): ErrorBody
  }
}

/** Node's limit on the request line plus headers: a GET with a 2,000-character CJK question is ~18 KB of URL. */
const MAX_HEADER_BYTES = 64 * 1024

export interface BuildOptions {
  /** Pino options, or false for no logs (tests). */
  logger?: boolean | Record<string, unknown>
  /** A pino logger to use instead (the server shares one with the providers). */
  loggerInstance?: Logger
}

/** Builds the app on a runtime (`createRuntime` in src/runtime.ts) and its config; never listens. Closing the app closes the runtime. */
export async function buildApp(runtime: Runtime, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config } = runtime
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? { level: config.logLevel } }),
    ...requestIdServerOptions(),
    ...accessLogServerOptions(),
    bodyLimit: config.limits.bodyLimitBytes,
    // Past Node's 16 KB header default (see MAX_HEADER_BYTES).
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    // What Node's parser refuses (a raw UTF-8 URL above all) gets a JSON answer in the service's error shape.
    clientErrorHandler: clientErrorHandler(MAX_HEADER_BYTES),
    // Ids are up to 512 characters; percent-encoded, an astral character takes 12, so 512 of them fit.
    routerOptions: { maxParamLength: 8192 },
    trustProxy: config.security.trustProxy,
    // The options and the messages of every schema check (src/schemas/validation.ts): a 400 names the field and the value.
    ajv: { customOptions: { ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] } },
    schemaErrorFormatter: (validationErrors, dataVar) => new Errors.badRequest(schemaErrorMessage(validationErrors, dataVar))
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('runtime', runtime)
  app.addHook('onClose', async () => runtime.close())
  const legBackends = legBackendsOf(runtime.names)

  await app.register(gracefulClose)
  await app.register(requestId)
  await app.register(accessLog)
  // Every limit of config.overload; the Retry-After it sets is the error handler's, below.
  const { retryAfterSeconds: _retryAfterSeconds, ...overloadLimits } = config.overload
  await app.register(overload, {
    ...overloadLimits,
    embeddingBacklog: () => runtime.embeddingBacklog(),
    // Loading the model, building an index and ingesting the demo world stall the loop by design; a step
    // that only waits to retry (a backend down) does not.
    started: () => !runtime.startup.working
  })
  await app.register(requestsInFlight, { begins: () => runtime.requestBegins() })
  await app.register(startupGate, { startup: runtime.startup })
  await app.register(security, {
    apiKeys: config.security.apiKeys,
    readKeysRequired: config.security.readKeysRequired,
    corsOrigins: config.security.corsOrigins,
    rateLimit: config.security.rateLimitMax > 0
      ? { max: config.security.rateLimitMax, timeWindowMs: config.security.rateLimitWindowMs, ...(runtime.redis ? { redis: runtime.redis } : {}) }
      : false,
    errorResponseSchema: ErrorSchema as unknown as Record<string, unknown>
  })
  await app.register(metrics, { metrics: runtime.metrics })

  app.decorate('errorAnswer', (error: FastifyError, log: FastifyBaseLogger): ErrorBody => {
    const mapped = mapError(error, config.limits.bodyLimitBytes)
    if (error instanceof ProviderError) app.metrics.backendError(error.backend)
    if (error instanceof AllLegsFailedError) app.metrics.failedLegs(legBackends.hybrid, error.legs)
    if (mapped.statusCode >= 500 && mapped.statusCode !== 503) log.error({ err: error }, 'request failed')
    // Shedding and start-up refusals are expected and can come by the thousand: the access log line is enough.
    else if (mapped.code === 'RECALL_OVERLOADED' || mapped.code === 'RECALL_STARTING') log.debug({ code: mapped.code, message: mapped.message }, 'request refused')
    else if (mapped.statusCode === 503) log.warn({ code: mapped.code, message: mapped.message }, 'request refused')
    else log.info({ code: mapped.code, message: mapped.message }, 'request rejected')
    return {
      statusCode: mapped.statusCode,
      code: mapped.code ?? 'RECALL_INTERNAL',
      error: httpReason(mapped.statusCode),
      message: mapped.message
    }
  })
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const body = app.errorAnswer(error, request.log)
    if (error instanceof StaleReplicaError) void reply.header('retry-after', error.retryAfterSeconds)
    // Every 503 (overloaded, starting, a backend down) says when to come back.
    if (body.statusCode === 503 && !reply.hasHeader('retry-after')) void reply.header('retry-after', config.overload.retryAfterSeconds)
    return reply.code(body.statusCode).send(body)
  })
  app.setNotFoundHandler((request, reply) => reply.code(404).send({
    statusCode: 404, code: 'RECALL_NOT_FOUND', error: 'Not Found', message: `no route ${request.method} ${request.url.split('?')[0]}`
  }))

  await app.register(swaggerPlugin)
  await app.register(retrieveRoutes)
  await app.register(compareRoutes)
  await app.register(contextRoutes)
  await app.register(evaluateRoutes)
  await app.register(retrievalDefaultsRoutes)
  await app.register(demoPage)
  await app.register(ingestJobRoutes)
  await app.register(documentRoutes)
  await app.register(fileRoutes)
  await app.register(imageRoutes)
  await app.register(documentStatusRoutes)
  await app.register(graphRoutes)
  await app.register(episodeRoutes)
  await app.register(conversationRoutes)
  await app.register(namespaceRoutes)
  await app.register(analyzeRoutes)
  await app.register(mcpRoutes)
  await app.register(healthRoutes)
  return app as unknown as FastifyInstance
}

/** One place where every failure becomes an HTTP status, a code and a message without a stack. */
function mapError(error: FastifyError, bodyLimitBytes: number): { statusCode: number; code?: string; message: string } {
  if (error instanceof BackendUnavailableError) return new Errors.backendUnavailable(error.backend, error.message)
  if (error instanceof BackendTimeoutError) return new Errors.backendTimeout(error.backend, error.message)
  if (error instanceof ProviderError) return new Errors.backendFailed(error.backend, error.message)
  if (error instanceof EpisodicOptionError) return new Errors.badRequest(error.message)
  if (error instanceof AllLegsFailedError) return new Errors.legsFailed(error.message)
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new Errors.payloadTooLarge(bodyLimitBytes)
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) return { statusCode: status, code: error.code ?? 'RECALL_BAD_REQUEST', message: error.message }
  if (status >= 500 && error.code?.startsWith('RECALL_')) return { statusCode: status, code: error.code, message: error.message }
  return new Errors.internal()
}

const httpReason = (status: number) => STATUS_CODES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request')
