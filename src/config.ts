import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { ScopedApiKey } from './plugins/security.js'
import { isNamespace, NAMESPACE_PATTERN } from './providers/namespace.js'

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false')])
const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const Millis = Type.Integer({ minimum: 1, maximum: 600_000 })

/**
 * Every environment variable the service reads, with its embedded default. The README's configuration
 * table lists the same names; `.env.example` too.
 */
export const EnvSchema = Type.Object({
  PORT: Type.Optional(Port),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
  ])),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  DEMO_DATA: Type.Optional(Bool),
  VECTOR_BACKEND: Type.Optional(Type.Union([Type.Literal('memory'), Type.Literal('qdrant')])),
  QDRANT_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  QDRANT_API_KEY: Type.Optional(Type.String()),
  COLLECTION_PREFIX: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]*$' })),
  GRAPH_BACKEND: Type.Optional(Type.Union([Type.Literal('memory'), Type.Literal('neo4j')])),
  NEO4J_URI: Type.Optional(Type.String({ pattern: '^(bolt|neo4j)(\\+s|\\+ssc)?://' })),
  NEO4J_USER: Type.Optional(Type.String()),
  NEO4J_PASSWORD: Type.Optional(Type.String()),
  NEO4J_DATABASE: Type.Optional(Type.String()),
  EMBEDDER: Type.Optional(Type.Union([Type.Literal('local'), Type.Literal('openai')])),
  MODEL_DIR: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDING_THREADS: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
  EMBEDDING_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  EMBEDDING_MODEL: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDING_API_KEY: Type.Optional(Type.String()),
  EMBEDDING_DIMENSIONS: Type.Optional(Type.Integer({ minimum: 1, maximum: 8192 })),
  MAX_QUERY_CHARS: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  EVAL_MAX_QUESTIONS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  EVAL_TIMEOUT_SECONDS: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  BODY_LIMIT_BYTES: Type.Optional(Type.Integer({ minimum: 1024 })),
  VECTOR_TIMEOUT_MS: Type.Optional(Millis),
  LEXICAL_TIMEOUT_MS: Type.Optional(Millis),
  EMBEDDING_TIMEOUT_MS: Type.Optional(Millis),
  GRAPH_TIMEOUT_MS: Type.Optional(Millis),
  VECTOR_WRITE_TIMEOUT_MS: Type.Optional(Millis),
  GRAPH_WRITE_TIMEOUT_MS: Type.Optional(Millis),
  EMBEDDING_WRITE_TIMEOUT_MS: Type.Optional(Millis),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  REDIS_COMMAND_TIMEOUT_MS: Type.Optional(Millis),
  CACHE_TTL_SECONDS: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
  EMBEDDING_CACHE_TTL_SECONDS: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000 })),
  CACHE_MAX_ENTRIES: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
  API_KEYS: Type.Optional(Type.String({ pattern: '^[^,\\s]+(,[^,\\s]+)*$' })),
  READ_API_KEYS_REQUIRED: Type.Optional(Bool),
  RATE_LIMIT_MAX: Type.Optional(Type.Integer({ minimum: 0 })),
  RATE_LIMIT_WINDOW_MS: Type.Optional(Millis),
  CORS_ORIGINS: Type.Optional(Type.String()),
  TRUST_PROXY: Type.Optional(Bool),
  MAX_IN_FLIGHT: Type.Optional(Type.Integer({ minimum: 0 })),
  MAX_EMBEDDING_QUEUE: Type.Optional(Type.Integer({ minimum: 0 })),
  MAX_EMBEDDING_WAIT_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
  MAX_EVENT_LOOP_DELAY_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  EVENT_LOOP_DELAY_SAMPLES: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
  OVERLOAD_RETRY_AFTER_SECONDS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
  MAX_EVENT_LOOP_UTILIZATION: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  MAX_HEAP_BYTES: Type.Optional(Type.Integer({ minimum: 0 })),
  MAX_RSS_BYTES: Type.Optional(Type.Integer({ minimum: 0 }))
})
export type Env = Static<typeof EnvSchema>

/** The validated configuration, with defaults applied and cross-field needs checked. */
export interface Config {
  port: number
  host: string
  logLevel: NonNullable<Env['LOG_LEVEL']>
  dataDir: string
  demoData: boolean
  vector: { backend: 'memory' } | { backend: 'qdrant'; url: string; apiKey?: string }
  collectionPrefix: string
  graph: { backend: 'memory' } | { backend: 'neo4j'; uri: string; user: string; password: string; database?: string }
  embedder:
    | { backend: 'local'; modelDir: string; model: string; threads: number }
    | { backend: 'openai'; url: string; model: string; apiKey?: string; dimensions?: number }
  limits: { maxQueryChars: number; bodyLimitBytes: number }
  /** `POST /evaluate`: most questions a judged set may hold, and longest an evaluation may run. */
  evaluation: { maxQuestions: number; timeoutSeconds: number }
  /** Per-backend-call timeouts in milliseconds: reads (queries) and writes (imports, deletes). */
  timeouts: {
    vector: number; lexical: number; embedding: number; graph: number
    vectorWrite: number; graphWrite: number; embeddingWrite: number
  }
  cache: {
    redisUrl?: string
    redisCommandTimeoutMs: number
    /** Whole responses; 0 turns the response cache off. */
    responseTtlSeconds: number
    /** Query embeddings; 0 turns the embedding cache off. */
    embeddingTtlSeconds: number
    maxEntries: number
  }
  security: {
    /** `API_KEYS`: each key for every namespace, or for the namespaces it names. */
    apiKeys: ScopedApiKey[]
    readKeysRequired: boolean
    /** 0 turns rate limiting off. */
    rateLimitMax: number
    rateLimitWindowMs: number
    corsOrigins: string[]
    trustProxy: boolean
  }
  /** When to refuse work with 503 (`src/plugins/overload.ts`); 0 turns a limit off. */
  overload: {
    maxInFlight: number
    maxEmbeddingQueue: number
    maxEmbeddingWaitMs: number
    maxEventLoopDelayMs: number
    eventLoopDelaySamples: number
    /** 0 (off) by default: a saturated but healthy process sits near 1. */
    maxEventLoopUtilization: number
    maxHeapBytes: number
    maxRssBytes: number
    retryAfterSeconds: number
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

const INTEGER_VARS = new Set([
  'PORT', 'EMBEDDING_DIMENSIONS', 'EMBEDDING_THREADS', 'MAX_QUERY_CHARS', 'BODY_LIMIT_BYTES', 'EVAL_MAX_QUESTIONS', 'EVAL_TIMEOUT_SECONDS',
  'VECTOR_TIMEOUT_MS', 'LEXICAL_TIMEOUT_MS', 'EMBEDDING_TIMEOUT_MS', 'GRAPH_TIMEOUT_MS',
  'VECTOR_WRITE_TIMEOUT_MS', 'GRAPH_WRITE_TIMEOUT_MS', 'EMBEDDING_WRITE_TIMEOUT_MS',
  'MAX_IN_FLIGHT', 'MAX_EMBEDDING_QUEUE', 'MAX_EMBEDDING_WAIT_MS', 'EVENT_LOOP_DELAY_SAMPLES', 'OVERLOAD_RETRY_AFTER_SECONDS',
  'REDIS_COMMAND_TIMEOUT_MS', 'CACHE_TTL_SECONDS', 'EMBEDDING_CACHE_TTL_SECONDS', 'CACHE_MAX_ENTRIES',
  'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_MS', 'MAX_EVENT_LOOP_DELAY_MS', 'MAX_HEAP_BYTES', 'MAX_RSS_BYTES'
])

/** What a variable accepts, in words, for the start-up error. */
function describe(schema: TSchema): string {
  const s = schema as { anyOf?: { const?: unknown }[]; pattern?: string; minimum?: number; maximum?: number; minLength?: number }
  if (s.anyOf) return `must be one of ${s.anyOf.map((o) => String(o.const)).join(' | ')}`
  if (s.pattern) return `must match ${s.pattern}`
  if (s.minimum !== undefined || s.maximum !== undefined) return `must be between ${s.minimum ?? '-∞'} and ${s.maximum ?? '∞'}`
  if (s.minLength) return 'must not be empty'
  return 'is invalid'
}

/**
 * `API_KEYS`: comma-separated entries, each `key` (every namespace) or `key=ns1|ns2` (only those). A bad entry
 * is a problem naming its position, never the key itself.
 */
function parseApiKeys(value: string, problems: string[]): ScopedApiKey[] {
  return value.split(',').map((entry, i) => {
    const at = entry.indexOf('=')
    if (at < 0) return { key: entry }
    const key = entry.slice(0, at)
    const namespaces = entry.slice(at + 1).split('|')
    if (key === '') problems.push(`API_KEYS entry ${i + 1}: the key before "=" is empty`)
    for (const ns of namespaces) {
      if (!isNamespace(ns)) problems.push(`API_KEYS entry ${i + 1}: namespace ${JSON.stringify(ns)} does not match ${NAMESPACE_PATTERN}`)
    }
    return { key, namespaces }
  })
}

/** Reads and validates the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const env: Record<string, unknown> = {}
  const problems: string[] = []
  for (const key of Object.keys(EnvSchema.properties)) {
    const raw = source[key]
    if (raw === undefined || raw === '') continue
    if (INTEGER_VARS.has(key)) {
      if (!/^-?\d+$/.test(raw.trim())) problems.push(`${key}=${JSON.stringify(raw)}: must be an integer`)
      else env[key] = Number(raw.trim())
    } else if (key === 'MAX_EVENT_LOOP_UTILIZATION') {
      if (!/^\d+(\.\d+)?$/.test(raw.trim())) problems.push(`${key}=${JSON.stringify(raw)}: must be a number`)
      else env[key] = Number(raw.trim())
    } else {
      env[key] = raw
    }
  }
  for (const [key, value] of Object.entries(env)) {
    const schema = (EnvSchema.properties as Record<string, TSchema>)[key]!
    if (!Value.Check(schema, value)) problems.push(`${key}=${JSON.stringify(value)}: ${describe(schema)}`)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  const e = env as Env

  const vectorBackend = e.VECTOR_BACKEND ?? 'memory'
  if (vectorBackend === 'qdrant' && !e.QDRANT_URL) problems.push('VECTOR_BACKEND=qdrant needs QDRANT_URL')
  const graphBackend = e.GRAPH_BACKEND ?? 'memory'
  if (graphBackend === 'neo4j' && !e.NEO4J_URI) problems.push('GRAPH_BACKEND=neo4j needs NEO4J_URI')
  const embedderBackend = e.EMBEDDER ?? 'local'
  if (embedderBackend === 'openai' && !e.EMBEDDING_URL) problems.push('EMBEDDER=openai needs EMBEDDING_URL')
  if (embedderBackend === 'openai' && !e.EMBEDDING_MODEL) problems.push('EMBEDDER=openai needs EMBEDDING_MODEL')
  if (e.READ_API_KEYS_REQUIRED === 'true' && !e.API_KEYS) problems.push('READ_API_KEYS_REQUIRED=true needs API_KEYS')
  const apiKeys = e.API_KEYS ? parseApiKeys(e.API_KEYS, problems) : []
  if (problems.length > 0) throw new ConfigError(problems)

  const embeddingTimeoutMs = e.EMBEDDING_TIMEOUT_MS ?? 2000
  return {
    port: e.PORT ?? 3000,
    host: e.HOST ?? '127.0.0.1',
    logLevel: e.LOG_LEVEL ?? 'info',
    dataDir: e.DATA_DIR ?? './data',
    demoData: (e.DEMO_DATA ?? 'true') === 'true',
    vector: vectorBackend === 'qdrant'
      ? { backend: 'qdrant', url: e.QDRANT_URL!, ...(e.QDRANT_API_KEY ? { apiKey: e.QDRANT_API_KEY } : {}) }
      : { backend: 'memory' },
    collectionPrefix: e.COLLECTION_PREFIX ?? 'recall_',
    graph: graphBackend === 'neo4j'
      ? {
          backend: 'neo4j', uri: e.NEO4J_URI!, user: e.NEO4J_USER ?? 'neo4j', password: e.NEO4J_PASSWORD ?? '',
          ...(e.NEO4J_DATABASE ? { database: e.NEO4J_DATABASE } : {})
        }
      : { backend: 'memory' },
    embedder: embedderBackend === 'openai'
      ? {
          backend: 'openai', url: e.EMBEDDING_URL!, model: e.EMBEDDING_MODEL!,
          ...(e.EMBEDDING_API_KEY ? { apiKey: e.EMBEDDING_API_KEY } : {}),
          ...(e.EMBEDDING_DIMENSIONS ? { dimensions: e.EMBEDDING_DIMENSIONS } : {})
        }
      : {
          backend: 'local', modelDir: e.MODEL_DIR ?? './models', model: e.EMBEDDING_MODEL ?? 'bge-small-zh-v1.5',
          // One ONNX thread: a second one waits for a core at every operator on a busy machine. Measured here
          // (load average ~7, 2 cores): a query 2.3 ms vs 9.0 ms p50, a 480-character passage 55 vs 144 ms.
          threads: e.EMBEDDING_THREADS ?? 1
        },
    limits: { maxQueryChars: e.MAX_QUERY_CHARS ?? 2000, bodyLimitBytes: e.BODY_LIMIT_BYTES ?? 10 * 1024 * 1024 },
    evaluation: { maxQuestions: e.EVAL_MAX_QUESTIONS ?? 5000, timeoutSeconds: e.EVAL_TIMEOUT_SECONDS ?? 1800 },
    // Defaults: a local ONNX query embedding takes ~10 ms and an exact scan ~5 ms at 10k chunks; the
    // timeouts leave an order of magnitude for load spikes while keeping a hybrid answer under ~2 s.
    timeouts: {
      vector: e.VECTOR_TIMEOUT_MS ?? 1500,
      lexical: e.LEXICAL_TIMEOUT_MS ?? 1000,
      embedding: embeddingTimeoutMs,
      graph: e.GRAPH_TIMEOUT_MS ?? 2000,
      // Writes get a minute: a bulk import's first write on a busy server (Neo4j plan compile, lock waits,
      // Qdrant segment work, a remote model's batch) may take far longer than a query, and an import
      // should fail only when a backend is really gone.
      vectorWrite: e.VECTOR_WRITE_TIMEOUT_MS ?? 60_000,
      graphWrite: e.GRAPH_WRITE_TIMEOUT_MS ?? 60_000,
      embeddingWrite: e.EMBEDDING_WRITE_TIMEOUT_MS ?? 60_000
    },
    cache: {
      ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
      // A cache round trip must cost less than the work it saves: a query embedding is ~5-20 ms.
      redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS ?? 50,
      responseTtlSeconds: e.CACHE_TTL_SECONDS ?? 300,
      // The vector of a text never changes under one model; a day bounds the memory it holds.
      embeddingTtlSeconds: e.EMBEDDING_CACHE_TTL_SECONDS ?? 86_400,
      maxEntries: e.CACHE_MAX_ENTRIES ?? 10_000
    },
    security: {
      apiKeys,
      readKeysRequired: e.READ_API_KEYS_REQUIRED === 'true',
      rateLimitMax: e.RATE_LIMIT_MAX ?? 1200,
      rateLimitWindowMs: e.RATE_LIMIT_WINDOW_MS ?? 60_000,
      corsOrigins: e.CORS_ORIGINS ? e.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean) : [],
      trustProxy: e.TRUST_PROXY === 'true'
    },
    overload: {
      // See the Reliability section of the README for how these defaults were chosen (bench/overload.ts).
      maxInFlight: e.MAX_IN_FLIGHT ?? 512,
      maxEmbeddingQueue: e.MAX_EMBEDDING_QUEUE ?? 256,
      // Half the embedding timeout: a request accepted then still gets its vector in time, with room for the
      // estimate to be short (runs slow down as the load rises; bench/results/overload.json).
      maxEmbeddingWaitMs: e.MAX_EMBEDDING_WAIT_MS ?? Math.round(0.5 * embeddingTimeoutMs),
      maxEventLoopDelayMs: e.MAX_EVENT_LOOP_DELAY_MS ?? 1000,
      eventLoopDelaySamples: e.EVENT_LOOP_DELAY_SAMPLES ?? 5,
      maxEventLoopUtilization: e.MAX_EVENT_LOOP_UTILIZATION ?? 0,
      maxHeapBytes: e.MAX_HEAP_BYTES ?? 0,
      maxRssBytes: e.MAX_RSS_BYTES ?? 0,
      retryAfterSeconds: e.OVERLOAD_RETRY_AFTER_SECONDS ?? 5
    }
  }
}
