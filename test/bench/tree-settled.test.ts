/**
 * `Tree.settled` (bench/lib/tree.ts), which bench/same-answers.ts waits on before it asks anything: a graph write answers
 * before its names' vectors are written (they are embedded in the background), and a question asked meanwhile is
 * answered over the names embedded so far. Issue 44's A/A run of 6b76644 differed in 4 of 496 bodies that way. The real
 * service on the embedded stores and the real model; the names are counted by hand.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadTree } from '../../bench/lib/tree.js'

// 12 entities, one name each and no alias: 12 distinct texts, each embedded alone (a background run takes them in batches)
const NAMES = ['处方审核', '消息顺序', '数据仓库', '病历服务', '消费组', '分区日志', '鉴权中间件', '平台组', '网关', '令牌', '审计日志', '告警规则']

describe('Tree.settled', () => {
  const tree = loadTree('this', '.')
  let dir: string
  let services: any
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-tree-settled-'))
    const config = await tree.loadConfig({
      DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: join(tree.dir, 'models'), EMBEDDING_SESSIONS: '0',
      ENTITY_VECTORS: 'true', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', CACHE_TTL_SECONDS: '0'
    })
    services = await tree.openServices(config, (providers: unknown) => providers)
  }, 180_000)
  afterAll(async () => {
    await services?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('resolves only once every name a graph write brought has its vector', async () => {
    await tree.settled(services)
    const entities = NAMES.map((name, i) => ({ id: `e${i}`, name, source_chunk_ids: [] }))
    await tree.write(services, 'default', { kind: 'graph', op: 'upsert', body: { entities, relations: [] } })
    await tree.settled(services)
    expect(await services.entityVectors.namespace('default')).toEqual({ pending: 0, done: NAMES.length, failed: 0 })
  }, 180_000)
})
