import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/http/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { openServices, type Providers, type ServiceHooks, type Services } from '../../src/services.js'
import { createRuntime } from '../../src/runtime.js'

/** An app as tests see it: `app.services` is a test-only accessor to the services under its runtime. */
export type TestFastify = FastifyInstance & { services: Services }

/** Gives a test its app's services (`app.services`); the HTTP layer itself sees only `app.runtime`. */
export function withServices(app: FastifyInstance, services: Services): TestFastify {
  app.decorate('services', services)
  return app as TestFastify
}

export interface TestApp {
  app: TestFastify
  config: Config
  dataDir: string
  close(): Promise<void>
}

/**
 * The app on the embedded default with the real local model in process, over a fresh DATA_DIR (demo data off).
 * `env` adds or overrides variables; `providers` replaces some providers (e.g. to make a leg fail); `hooks` are the
 * services' (e.g. another write lock).
 */
export async function buildTestApp(env: Record<string, string> = {}, providers?: (p: Providers) => Providers, hooks: ServiceHooks = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-test-'))
  // EMBEDDING_SESSIONS 0: the model in the test's process, where the service would start a session process per core
  // for every app; the pool has its own tests (test/providers/embedder.pool.test.ts), an app on it among them.
  // DERIVED_EPISODES false: a test app's document writes embed no entity names for Episodes it does not read; the tests
  // of derived Episodes turn it on (test/corpus/derived-episodes.test.ts). ENTITY_VECTORS false likewise: no background
  // embedding of graph names under tests that count what is embedded; test/corpus/entity-vectors*.test.ts turn it on.
  const config = loadConfig({
    DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0', DERIVED_EPISODES: 'false', ENTITY_VECTORS: 'false', ...env
  })
  const services = await openServices(config, { ...hooks, ...(providers ? { providers } : {}) })
  const app = withServices(await buildApp(createRuntime(services), { logger: false }), services)
  await app.ready()
  return {
    app, config, dataDir,
    async close() {
      await app.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  }
}
