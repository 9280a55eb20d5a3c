import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { createServices } from '../../src/services.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { startRedis, type RedisServer } from '../helpers/redis-server.js'

// A real Redis of this test's own, frozen with SIGSTOP (its connections stay open, commands time out, and
// its data, old versions and cached answers included, is all there when SIGCONT thaws it).
let redis: RedisServer
let t: TestApp
beforeAll(async () => {
  redis = await startRedis()
  t = await buildTestApp({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '200' })
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'oncall', text: '# 值班\n\n夜间告警由二线值班处理。' }] } })
  expect(r.statusCode, r.body).toBe(200)
})
afterAll(async () => {
  try { process.kill(redis.pid, 'SIGCONT') } catch { /* already gone */ }
  await t?.close()
  await redis?.stop('SIGKILL')
})

const ask = () => t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=lexical&q=${encodeURIComponent('夜间告警')}` })
const ids = (r: { json(): { recall_bundle: Array<{ id: string }> } }) => r.json().recall_bundle.map((i) => i.id)

describe('the version store down', () => {
  it('answers uncached while Redis is frozen, records a write made meanwhile when it is back, and never serves the older answer', async () => {
    await ask()
    const before = await ask()
    expect(before.json().cached).toBe(true)
    expect(ids(before)).toEqual(['oncall#0'])

    process.kill(redis.pid, 'SIGSTOP')
    const during = await ask()
    expect(during.statusCode).toBe(200)
    expect(during.json().cached).toBe(false)
    const write = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'oncall-2', text: '# 节假日\n\n节假日夜间告警由三线处理。' }] } })
    expect(write.statusCode, write.body).toBe(200)
    expect(write.json().generation).toBeUndefined() // not recorded: the store did not answer
    const afterWrite = await ask()
    expect(afterWrite.json().cached).toBe(false)
    expect(ids(afterWrite).sort()).toEqual(['oncall#0', 'oncall-2#0'])

    process.kill(redis.pid, 'SIGCONT')
    // From the moment Redis answers again, with the old version and the old answer still in it, every
    // answer holds both documents: first uncached (the write is not recorded yet), then cached anew.
    const seen: boolean[] = []
    for (let i = 0; i < 40; i++) {
      const r = await ask()
      expect(ids(r).sort()).toEqual(['oncall#0', 'oncall-2#0'])
      seen.push(r.json().cached as boolean)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(seen.at(-1)).toBe(true)
    const next = await t.app.inject({ method: 'DELETE', url: '/documents/oncall-2' })
    expect(next.json().generation).toBeGreaterThan(0)
  })
})

describe('several replicas without Redis', () => {
  it('turns the response cache off and says so at start-up', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-test-'))
    try {
      const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', REPLICAS: '3' })
      expect(config.cache.responseTtlSeconds).toBe(0)
      const warnings: string[] = []
      const logger = { warn: (_: object, msg: string) => { warnings.push(msg) }, info: () => undefined, error: () => undefined }
      const services = createServices(config, { logger: logger as never })
      await services.close()
      expect(warnings).toContain('REPLICAS=3 without REDIS_URL: the response cache is off (its versions must be shared to see other replicas\' writes)')
      // one replica, or several with Redis, keep it
      expect(loadConfig({ DATA_DIR: dataDir }).cache.responseTtlSeconds).toBe(300)
      expect(loadConfig({ DATA_DIR: dataDir, REPLICAS: '3', REDIS_URL: 'redis://127.0.0.1:1' }).cache.responseTtlSeconds).toBe(300)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
