import { createHash, timingSafeEqual } from 'node:crypto'
import createError from '@fastify/error'
import fastifyCors from '@fastify/cors'
import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { RedisClient } from '../../providers/redis-client.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { documentErrorResponses, type DocumentedError } from './document-errors.js'
import type { ScopedApiKey } from '../../config.js'

export const AuthRequiredError = createError('RECALL_AUTH_REQUIRED', 'This route needs an API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`', 401)
const AuthInvalidError = createError('RECALL_AUTH_INVALID', 'The API key sent is not valid%s', 401)
const RateLimitedError = createError('RECALL_RATE_LIMITED', 'Rate limit exceeded, retry in %s', 429)
export const NamespaceForbiddenError = createError('RECALL_NAMESPACE_FORBIDDEN', 'this API key may not use namespace %s', 403)


/** The namespaces a request touches, read from its validated input (a route's `config.namespaces`). */
export type NamespacesOf = (request: FastifyRequest) => readonly string[]

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The namespaces this route's request reads or writes; a key scoped to others gets a 403. */
    namespaces?: NamespacesOf
  }
  interface FastifyRequest {
    /**
     * Whether the request may use `namespace`: false only when it presented a valid key scoped to other
     * namespaces. A route that lists namespaces filters with it.
     */
    mayUseNamespace(namespace: string): boolean
    /** Whether the request presented a valid API key (always false when no keys are configured). */
    hasValidApiKey(): boolean
  }
}

interface RateLimitOptions {
  /** Requests allowed per key (or per IP when no valid key is sent) in each window. */
  max: number
  /** Window length in milliseconds. */
  timeWindowMs: number
  /** Keeps the counters in Redis so every replica shares them; in-process when absent. */
  redis?: RedisClient
}

export interface SecurityOptions {
  /**
   * Accepted API keys, each for every namespace (a string) or for some ({key, namespaces}). Empty (the
   * default) means no route ever needs a key.
   */
  apiKeys?: readonly (string | ScopedApiKey)[]
  /** Whether reads need a key too (`READ_API_KEYS_REQUIRED`). Default false; needs `apiKeys`. */
  readKeysRequired?: boolean
  /** `METHOD /url` of POST routes that only read. Default `POST /retrieve`, `POST /retrieve/compare`, `POST /context`, `POST /analyze`, `POST /mcp` (whose `ingest` tool checks the key itself). */
  readRoutes?: readonly string[]
  /** Route URLs that never need a key and are never rate limited (probes, scrapes). Default `/healthz`, `/readyz`, `/metrics`. */
  publicRoutes?: readonly string[]
  /** Allowed browser origins; `['*']` allows any. Empty (the default) sends no CORS headers. */
  corsOrigins?: readonly string[]
  /** Per key/IP rate limit; `false` (the default) turns it off. */
  rateLimit?: RateLimitOptions | false
  /**
   * Adds the 401 and 429 answers this plugin can give, and Fastify's 413 and 415 for bodies, to the
   * response schemas of routes registered after it (unless a route declares them itself), so the
   * OpenAPI document lists them whatever the configuration. Default true.
   */
  documentResponses?: boolean
  /** Schema of the error body used for those answers. Default: `{statusCode, code, error, message}`. */
  errorResponseSchema?: Record<string, unknown>
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

const ErrorResponseSchema: Record<string, unknown> = {
  type: 'object',
  required: ['statusCode', 'code', 'error', 'message'],
  properties: {
    statusCode: { type: 'integer' },
    code: { type: 'string' },
    error: { type: 'string' },
    message: { type: 'string' }
  }
}

/** Description and example of each answer this plugin documents on routes. */
const DOCUMENTED: Record<string, DocumentedError> = {
  '401': { description: 'API key missing or not valid', code: 'RECALL_AUTH_REQUIRED', error: 'Unauthorized', message: new AuthRequiredError().message },
  '403': {
    description: 'The API key is scoped to other namespaces (the same answer whether or not the namespace exists)',
    code: 'RECALL_NAMESPACE_FORBIDDEN', error: 'Forbidden', message: new NamespaceForbiddenError('"tenant-b"').message
  },
  '413': { description: 'Request body larger than the configured limit', code: 'RECALL_PAYLOAD_TOO_LARGE', error: 'Payload Too Large', message: 'request body is larger than 1048576 bytes' },
  '415': { description: 'Body sent with a content type other than application/json', code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', error: 'Unsupported Media Type', message: 'Unsupported Media Type' },
  '429': { description: 'Rate limit exceeded; see Retry-After', code: 'RECALL_RATE_LIMITED', error: 'Too Many Requests', message: 'Rate limit exceeded, retry in 1 minute' }
}

function digestKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

interface KnownKey {
  digest: Buffer
  /** Absent: every namespace. */
  namespaces?: ReadonlySet<string>
}

/**
 * The configured key `presented` is, or undefined. Digests of equal length are compared in constant time,
 * every one of them, without stopping at the first match.
 */
function knownKey(presented: string, keys: readonly KnownKey[]): KnownKey | undefined {
  const digest = digestKey(presented)
  let found: KnownKey | undefined
  for (const known of keys) if (timingSafeEqual(digest, known.digest)) found ??= known
  return found
}

type PresentedKey = { kind: 'none' } | { kind: 'key'; key: string } | { kind: 'malformed' }

function presentedKey(request: FastifyRequest): PresentedKey {
  const authorization = request.headers.authorization
  if (authorization !== undefined && authorization !== '') {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
    return match?.[1] === undefined ? { kind: 'malformed' } : { kind: 'key', key: match[1] }
  }
  const header = request.headers['x-api-key']
  const apiKey = Array.isArray(header) ? header[0] : header
  return apiKey === undefined || apiKey === '' ? { kind: 'none' } : { kind: 'key', key: apiKey }
}

const security: FastifyPluginAsync<SecurityOptions> = async (app, options) => {
  const apiKeys = options.apiKeys ?? []
  const readKeysRequired = options.readKeysRequired ?? false
  if (readKeysRequired && apiKeys.length === 0) {
    throw new Error('readKeysRequired needs at least one API key (set API_KEYS)')
  }
  const keys: KnownKey[] = apiKeys.map((k) => typeof k === 'string'
    ? { digest: digestKey(k) }
    : { digest: digestKey(k.key), ...(k.namespaces ? { namespaces: new Set(k.namespaces) } : {}) })
  // The scope of the key a request presented; undefined when it presented none, or none that is valid.
  const scopes = new WeakMap<FastifyRequest, ReadonlySet<string> | null>()
  // What each request presented, and the configured key it matched: resolved once, by whichever hook asks first.
  const resolved = new WeakMap<FastifyRequest, { presented: PresentedKey; known: KnownKey | undefined }>()
  const resolve = (request: FastifyRequest): { presented: PresentedKey; known: KnownKey | undefined } => {
    let entry = resolved.get(request)
    if (entry === undefined) {
      const presented = presentedKey(request)
      entry = { presented, known: presented.kind === 'key' ? knownKey(presented.key, keys) : undefined }
      resolved.set(request, entry)
    }
    return entry
  }
  app.decorateRequest('mayUseNamespace', function (this: FastifyRequest, namespace: string): boolean {
    const scope = scopes.get(this)
    return !scope || scope.has(namespace)
  })
  app.decorateRequest('hasValidApiKey', function (this: FastifyRequest): boolean {
    return scopes.has(this)
  })
  const readRoutes = new Set(options.readRoutes ?? ['POST /retrieve', 'POST /retrieve/compare', 'POST /context', 'POST /analyze', 'POST /mcp', 'POST /evaluate', 'DELETE /evaluate/jobs/:id'])
  const publicRoutes = new Set(options.publicRoutes ?? ['/healthz', '/readyz', '/metrics'])
  const corsOrigins = options.corsOrigins ?? []
  const rateLimit = options.rateLimit ?? false

  const isWrite = (method: string, url: string): boolean => WRITE_METHODS.has(method) && !readRoutes.has(`${method} ${url}`)
  const routeUrl = (request: FastifyRequest): string | undefined => request.routeOptions.url

  if (options.documentResponses ?? true) {
    app.addHook('onRoute', (route: RouteOptions) => {
      if (route.method === 'OPTIONS' || route.schema?.hide === true) return
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      const statuses = [
        ...(publicRoutes.has(route.url) ? [] : ['401', '429']),
        ...(route.config?.namespaces ? ['403'] : []),
        // Fastify answers 413 (bodyLimit) and 415 (no parser for the content type) on any route that reads a body.
        ...(methods.some((m) => BODY_METHODS.has(m)) ? ['413', '415'] : [])
      ]
      const answers = statuses.flatMap((status) => {
        const doc = DOCUMENTED[status]
        return doc === undefined ? [] : [[status, doc] as const]
      })
      documentErrorResponses(route, options.errorResponseSchema ?? ErrorResponseSchema, answers)
    })
  }

  if (corsOrigins.length > 0) {
    await app.register(fastifyCors, {
      origin: corsOrigins.includes('*') ? '*' : [...corsOrigins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['Content-Type', 'Authorization', 'X-API-Key', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'X-Cache', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
      maxAge: 600
    })
  }

  if (rateLimit !== false) {
    await app.register(fastifyRateLimit, {
      global: true,
      max: rateLimit.max,
      timeWindow: rateLimit.timeWindowMs,
      ...(rateLimit.redis === undefined ? {} : { redis: rateLimit.redis }),
      nameSpace: 'recall:ratelimit:',
      // A Redis outage must not fail requests: without the counter, the request goes through.
      skipOnError: true,
      allowList: (request) => {
        const url = routeUrl(request)
        return url !== undefined && publicRoutes.has(url)
      },
      // Only a valid key names the client; otherwise sending made-up keys would dodge the IP limit.
      keyGenerator: (request) => {
        const { known } = resolve(request)
        // The presented key's digest, which is the matched key's (equal digests).
        return known ? `key:${known.digest.toString('hex').slice(0, 32)}` : `ip:${request.ip}`
      },
      errorResponseBuilder: (_request, context) => new RateLimitedError(context.after)
    })
  }

  if (apiKeys.length > 0) {
    // preParsing runs after every onRequest hook (rate limit included) and before the body is read,
    // so an unauthenticated client can neither skip the rate limit nor make the server parse a body.
    app.addHook('preParsing', async (request) => {
      const url = routeUrl(request)
      if (request.method === 'OPTIONS' || url === undefined || publicRoutes.has(url)) return
      const { presented, known } = resolve(request)
      if (known) scopes.set(request, known.namespaces ?? null)
      // A read that needs no key is answered whatever key it carries; a valid scoped key still limits it.
      if (!readKeysRequired && !isWrite(request.method, url)) return
      if (presented.kind === 'none') throw new AuthRequiredError()
      if (presented.kind === 'malformed') throw new AuthInvalidError(': the Authorization header must use the Bearer scheme')
      if (!known) throw new AuthInvalidError('')
    })
    // After validation (the namespaces are read from the validated input) and before the handler touches a
    // store: the answer cannot depend on whether the namespace exists, in its message or its timing.
    app.addHook('preHandler', async (request) => {
      const namespacesOf = request.routeOptions.config.namespaces
      const scope = scopes.get(request)
      if (!namespacesOf || !scope) return
      const refused = namespacesOf(request).find((ns) => !scope.has(ns))
      if (refused !== undefined) throw new NamespaceForbiddenError(JSON.stringify(refused))
    })
    app.addHook('onSend', async (request, reply, payload) => {
      if (reply.statusCode === 401) reply.header('www-authenticate', 'Bearer')
      return payload
    })
  }
}

/** The namespace of a request that names it as `namespace` in its query string or body, else `default`. */
export const namespaceOfRequest: NamespacesOf = (request) => {
  const query = request.query as { namespace?: unknown } | undefined
  const body = request.body as { namespace?: unknown } | undefined
  const named = query?.namespace ?? body?.namespace
  return [typeof named === 'string' ? named : DEFAULT_NAMESPACE]
}

/** API keys (scoped to namespaces or not), CORS and rate limits, configured from typed options. */
export default fp(security, { name: 'recall-security', fastify: '5.x' })
