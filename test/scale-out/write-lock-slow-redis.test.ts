import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { startRedis, type RedisServer } from '../helpers/redis-server.js'

// One replica of several (REPLICAS=2, so document writes take the Redis write lock) with the production Redis
// command timeout of 50 ms, over a real redis-server of this file's own (its pause holds up no other test file).
// CLIENT PAUSE from another connection holds Redis's write commands for 200 ms, as a Redis starved of CPU on a
// loaded machine would: the lock's commands time out.
describe('a document write while Redis is too slow for the command timeout', () => {
  const namespace = `slow-${randomBytes(3).toString('hex')}`
  let server: RedisServer
  let raw: Redis
  let t: TestApp
  beforeAll(async () => {
    server = await startRedis()
    raw = new Redis(server.url)
    t = await buildTestApp({ REDIS_URL: server.url, REDIS_COMMAND_TIMEOUT_MS: '50', REPLICAS: '2' })
    const documents = [{ id: 'oncall', text: '# 值班\n\n夜间告警由二线值班处理。' }, { id: 'leave', text: '# 请假\n\n请假三天以上需要审批。' }]
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
  })
  afterAll(async () => {
    await t?.close()
    await raw?.quit()
    await server?.stop()
  })

  it('a delete that takes the lock during a 200 ms pause waits it out and answers 200', async () => {
    const started = performance.now()
    expect(await raw.client('PAUSE', '200', 'WRITE')).toBe('OK')
    const r = await t.app.inject({ method: 'DELETE', url: `/documents/oncall?namespace=${namespace}` })
    expect(r.statusCode, r.body).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(190) // the write did wait for Redis
    const listed = (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json()
    expect(listed.documents.map((d: { id: string }) => d.id)).toEqual(['leave'])
  })
})
