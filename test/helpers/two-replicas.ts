import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import { QDRANT_SKIP_LINE } from './qdrant-server.js'
import type { ServiceHooks } from '../../src/services.js'
import { buildTestApp, type TestApp } from './build.js'

/** Two app instances in one process, as two replicas over the same shared stores, each with its own DATA_DIR. */
export interface TwoReplicas {
  a: TestApp
  b: TestApp
  close(): Promise<void>
}

type Env = Record<string, string>

/**
 * The run's real Redis, as every replica pair shares it. The production 50 ms command timeout turns a call into
 * a failure whenever redis-server waits for a core on this machine: a second is what the tests can count on.
 */
export function sharedRedisEnv() {
  return { REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '1000' }
}

/**
 * The run's real Qdrant as the vector store (collections under a prefix of this pair only, `<stem><hex>_`) and
 * the run's Redis, for two replicas (`REPLICAS=2`) with the response cache off.
 */
export function sharedQdrantEnv(stem: string, qdrantUrl: string) {
  return {
    VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `${stem}${randomBytes(3).toString('hex')}_`,
    ...sharedRedisEnv(), REPLICAS: '2', CACHE_TTL_SECONDS: '0'
  }
}

/** The run's Qdrant URL; when the run has none, `''` after one line saying that `what` is skipped. */
export function runQdrantUrl(what: string): string {
  const url = inject('qdrantUrl')
  if (!url) console.warn(`${what}: ${QDRANT_SKIP_LINE}`)
  return url
}

/** Starts replica A, then replica B, both with `env`; if B fails to start, A is closed again. */
export async function startTwoReplicas(env: Env, hooks: ServiceHooks = {}): Promise<TwoReplicas> {
  const a = await buildTestApp(env, undefined, hooks)
  let b: TestApp
  try {
    b = await buildTestApp(env, undefined, hooks)
  } catch (error) {
    await a.close()
    throw error
  }
  return {
    a, b,
    async close() {
      await a.close()
      await b.close()
    }
  }
}

/**
 * Starts two replicas with `env` before the tests of the enclosing describe (or file), hands them to `started`
 * (e.g. `({ a, b } = pair)`), and closes them after those tests.
 */
export function useTwoReplicas(env: Env, started: (pair: TwoReplicas) => void, hooks: ServiceHooks = {}): void {
  let pair: TwoReplicas | undefined
  beforeAll(async () => {
    pair = await startTwoReplicas(env, hooks)
    started(pair)
  })
  afterAll(async () => {
    await pair?.close()
  })
}

/**
 * A hybrid retrieve of `namespace` through `t`, expected to answer 200, in the part two replicas must agree on:
 * without its timings and generation, each leg as its name, status and hits.
 */
export async function comparableHybrid(t: TestApp, namespace: string, payload: object) {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, top_k: 10, ...payload } })
  expect(r.statusCode, r.body).toBe(200)
  const { took_ms: _, legs, generation: __, ...rest } = r.json()
  return { ...rest, legs: legs.map((l: { name: string; status: string; hits: number }) => ({ name: l.name, status: l.status, hits: l.hits })) }
}
