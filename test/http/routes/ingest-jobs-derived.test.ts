/**
 * An ingest job's progress says what the documents written so far derived (`derived`, summed over its batches), and
 * at the end the same as `result.derived`: each figure checked against what the graph store holds of those documents.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { buildApp } from '../../../src/http/app.js'
import { openServices } from '../../../src/services.js'
import { createRuntime } from '../../../src/runtime.js'
import { withServices, type TestFastify } from '../../helpers/build.js'

let app: TestFastify
let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'recall-jobs-derived-'))
  // one document a batch, the derived graph on
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', INGEST_JOB_BATCH_CHUNKS: '1' })
  const services = await openServices(config)
  app = withServices(await buildApp(createRuntime(services), { logger: false }), services)
  await app.ready()
}, 300_000)
afterAll(async () => {
  await app?.close()
  await rm(dataDir, { recursive: true, force: true })
})

const documents = [
  { id: 'auth', text: '# 鉴权中间件\n\n鉴权中间件由平台组负责维护，依赖 Redis 集群。' },
  { id: 'drug', text: '# 用药提示\n\n左氧氟沙星禁用于18岁以下儿童，孕妇慎用。' },
  { id: 'oncall', text: '# 值班说明\n\n夜间告警由二线值班处理，升级时通知值班经理。' }
]

describe('an ingest job with the derived graph on', () => {
  it('shows the derived counts of the documents written so far, and at the end those of all of them', async () => {
    const namespace = 'jobs-derived'
    const r = await app.inject({ method: 'POST', url: '/ingest/documents?wait=false', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(202)
    const id = r.json().id as string
    const seen: any[] = []
    for (let j = r.json(); ; ) {
      seen.push(j)
      if (j.state !== 'running') break
      await new Promise((resolve) => setTimeout(resolve, 20))
      j = (await app.inject({ method: 'GET', url: `/ingest/jobs/${id}` })).json()
    }
    const last = seen.at(-1)
    expect(last.state).toBe('done')

    // what each document contributes, as the graph store holds it: entities and relations of which it is a source
    const graph = app.services.graph
    const contribution = async (docId: string) => {
      const { entities, relations } = await graph.derivedOf(namespace, [docId])
      return { entities: entities.length, relations: relations.length }
    }
    const per = await Promise.all(documents.map((d) => contribution(d.id)))
    const upTo = (k: number) => per.slice(0, k).reduce((n, c) => ({ entities: n.entities + c.entities, relations: n.relations + c.relations }), { entities: 0, relations: 0 })
    expect(upTo(3).entities).toBeGreaterThan(0)
    expect(last.derived).toEqual({ ...upTo(3), blocked: 0 })
    expect(last.result.derived).toEqual(last.derived)
    for (const j of seen) {
      if (j.documents.done === 0) expect(j.derived).toBeUndefined()
      else expect(j.derived, `after ${j.documents.done} documents`).toEqual({ ...upTo(j.documents.done), blocked: 0 })
    }
  }, 240_000)
})
