import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { buildApp } from '../../src/http/app.js'
import { createRuntime } from '../../src/runtime.js'
import { openServices } from '../../src/services.js'

// The service's release of the heap (src/memory/heap-release.ts) is timed by the write path (once after writes that
// add have gone quiet, not after a delete alone), paid only when predicted to give back enough, and told of the HTTP
// requests in flight.
const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const MiB = 2 ** 20

async function open(env: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-heap-release-'))
  dirs.push(dir)
  const logged: Array<Record<string, number>> = []
  const logger = {
    info: (obj: object, msg: string) => { if (msg.startsWith('heap released')) logged.push(obj as Record<string, number>) },
    warn: () => {}
  }
  const config = loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', EMBEDDING_SESSIONS: '0', ...env })
  return { services: await openServices(config, { logger }), logged }
}

const upsert = (id: string) => ({ kind: 'documents' as const, op: 'upsert' as const, documents: [{ id, text: `# 标题 ${id}\n\n夜间告警由二线值班处理，记录编号 ${id}。` }] })

describe('MEMORY_RELEASE_AFTER_MS in the service', () => {
  it('after a small ingest goes quiet, a release predicted to give back less than the threshold is skipped and counted, not after a delete alone', async () => {
    // threshold: 2% of an 8 GiB limit (164 MiB) over MEMORY_RELEASE_MIN_GAIN's 64 MiB; two short documents leave far less.
    // One write of both: one quiet time, so exactly one skip however slow the machine (two writes are one or two quiet
    // times, as the gap between them falls). Waited for, not timed.
    const { services, logged } = await open({ MEMORY_LIMIT: '8GiB', MEMORY_RELEASE_AFTER_MS: '300' })
    try {
      await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: [...upsert('a').documents, ...upsert('b').documents] })
      const quiet = () => services.memory.usage().release
      while (quiet().skipped + quiet().releases === 0) await wait(100)
      const release = quiet()
      expect(release).toMatchObject({ releases: 0, skipped: 1, skipped_heap: 0, last: null, min_gain_bytes: Math.floor(8 * 1024 * MiB * 0.02), max_heap_bytes: 512 * MiB })
      // what it predicted: the pool and the unused heap of a service that wrote two short documents (tens of MiB)
      expect(release.predicted_gain_bytes).toBeLessThan(release.min_gain_bytes)
      expect(logged).toHaveLength(0)
      expect(await services.metrics.registry.metrics()).toMatch(/^recall_memory_releases_skipped_total\{reason="gain"\} 1$/m)
      await services.writePath.write('default', { kind: 'documents', op: 'delete', ids: ['a'] })
      // a delete adds nothing: no quiet time follows it (five times the quiet time)
      await wait(1500)
      expect(services.memory.usage().release).toMatchObject({ releases: 0, skipped: 1 })
    } finally {
      await services.close()
    }
  }, 120_000)

  it('tells the release of each request in flight (probes and scrapes aside), begun and ended once', async () => {
    const { services } = await open({})
    const runtime = createRuntime(services)
    const begun: string[] = []
    let ended = 0
    const begins = runtime.requestBegins
    runtime.requestBegins = () => {
      begun.push('request')
      const end = begins()
      return () => {
        ended += 1
        end()
      }
    }
    const app = await buildApp(runtime, { logger: false })
    try {
      await app.ready()
      expect((await app.inject({ method: 'GET', url: '/namespaces' })).statusCode).toBe(200)
      expect(begun).toHaveLength(1)
      expect(ended).toBe(1)
      await app.inject({ method: 'GET', url: '/readyz' })
      await app.inject({ method: 'GET', url: '/metrics' })
      await app.inject({ method: 'GET', url: '/healthz' })
      expect(begun).toHaveLength(1)
      const body = (await app.inject({ method: 'GET', url: '/readyz' })).json() as { memory: { release: object } }
      expect(body.memory.release).toMatchObject({ releases: 0, skipped: 0, last: null, min_gain_bytes: expect.any(Number) })
    } finally {
      await app.close()
    }
  }, 120_000)
})
