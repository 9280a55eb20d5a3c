import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/build.js'
import { sharedRedisEnv, useTwoReplicas } from '../helpers/two-replicas.js'

// Two app instances in one process, as two replicas: each has its own embedded stores (DATA_DIR), and both
// share the run's real Redis for the response cache and its versions. So an answer one replica cached is a
// hit on the other, and a write through one must make the other stop serving what was cached before it.
const env = { ...sharedRedisEnv(), REPLICAS: '2' }
const namespace = `rv-${randomBytes(4).toString('hex')}`
const doc = (id: string, text: string) => ({ id, text, source: `${id}.md` })
const retrieve = (t: TestApp, mode: string, query: string) =>
  t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode, query, namespace, top_k: 5 } })

let a: TestApp
let b: TestApp
useTwoReplicas(env, (pair) => ({ a, b } = pair))
beforeAll(async () => {
  // Both replicas hold the same corpus (embedded stores are per replica; the shared catalog is another test).
  for (const t of [a, b]) {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [doc('oncall', '# 值班\n\n夜间告警由二线值班处理。'), doc('leave', '# 请假\n\n请假三天以上需要部门负责人审批。')] } })
    expect(r.statusCode, r.body).toBe(200)
  }
})

describe('response cache versions shared through Redis', () => {
  it('an answer cached through one replica is a hit on the other, and after a write through A, B never serves it', async () => {
    const first = await retrieve(b, 'hybrid', '夜间告警谁处理')
    expect(first.json().cached).toBe(false)
    expect((await retrieve(b, 'hybrid', '夜间告警谁处理')).json().cached).toBe(true)
    // the same request at the same shared version: A answers from what B cached
    const fromA = await retrieve(a, 'hybrid', '夜间告警谁处理')
    expect(fromA.json().cached).toBe(true)
    expect(fromA.json().recall_bundle).toEqual(first.json().recall_bundle)

    const write = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [doc('oncall-2', '# 值班补充\n\n节假日夜间告警由三线处理。')] } })
    expect(write.statusCode, write.body).toBe(200)
    const afterWrite = await retrieve(b, 'hybrid', '夜间告警谁处理')
    expect(afterWrite.headers['x-cache']).toBe('miss')
    expect(afterWrite.json().cached).toBe(false)
  })

  it('a write in one mode leaves the other modes\' cached answers of the namespace alone', async () => {
    await retrieve(b, 'hybrid', '请假审批')
    expect((await retrieve(b, 'hybrid', '请假审批')).json().cached).toBe(true)
    const episodes = { namespace, episodes: [{ id: 'E1', name: '值班制度调整', summary: '夜间告警改由二线值班处理' }] }
    expect((await a.app.inject({ method: 'POST', url: '/ingest/episodes', payload: episodes })).statusCode).toBe(200)
    expect((await retrieve(b, 'hybrid', '请假审批')).json().cached).toBe(true)
    expect((await retrieve(b, 'episodic', '值班制度')).json().cached).toBe(false)
    expect((await retrieve(b, 'episodic', '值班制度')).json().cached).toBe(true)
    // an episodic delete through A: B's cached episodic answer is not served again
    expect((await a.app.inject({ method: 'DELETE', url: `/episodes/E1?namespace=${namespace}` })).statusCode).toBe(200)
    expect((await retrieve(b, 'episodic', '值班制度')).json().cached).toBe(false)
  })

  it('a namespace deleted through A is not answered from B\'s cache', async () => {
    await retrieve(b, 'hybrid', '请假')
    expect((await retrieve(b, 'hybrid', '请假')).json().cached).toBe(true)
    expect((await a.app.inject({ method: 'DELETE', url: `/namespaces/${namespace}` })).statusCode).toBe(200)
    expect((await retrieve(b, 'hybrid', '请假')).json().cached).toBe(false)
  })
})
