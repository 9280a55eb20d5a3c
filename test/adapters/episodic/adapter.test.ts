import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEpisodicAdapter, EpisodicOptionError, type EpisodicPorts } from '../../../adapters/episodic/index.js'
import { ingestEpisodes } from '../../../src/corpus/appliers/writers/episodes-ingest.js'
import { LocalEmbedder } from '../../../src/providers/embedder/local.js'
import { EmbeddedEpisodicGraphStore } from '../../../src/providers/episodic-graph/embedded.js'
import { EmbeddedVectorStore } from '../../../src/providers/vector-store/embedded.js'
import { inTurns } from '../../helpers/turns.js'

// End to end on the embedded stores with the real bge model: ingest, then retrieve through the adapter.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const NOW = Date.parse('2026-04-22T12:00:00Z')
let dir: string
let ports: EpisodicPorts

const corpus = {
  entities: [{ id: 'N1', name: 'API', description: '对外接口' }, { id: 'N2', name: 'Kafka', description: '消息队列' }],
  episodes: [
    { id: 'E1', name: 'API 流式返回改造', summary: '【目标】把 /chat/completions 接口改成流式返回。【变更边界】鉴权中间件保持不变，只改响应层和测试。',
      mentioned_time_start: '2023-05-07T00:00:00Z', mentioned_time_end: '2023-05-08T00:00:00Z', mentioned_time_text: 'last Sunday',
      entities: ['N1'],
      facets: [
        { id: 'F1', search_text: '变更边界', facet_type: 'constraint', anchor_text: '鉴权中间件保持不变，只改响应层和测试', entities: ['N1'],
          points: [{ id: 'P1', search_text: '鉴权中间件不能改' }] },
        { id: 'F2', search_text: '目标', anchor_text: '接口改成流式返回' }
      ] },
    { id: 'E2', name: '消息队列选型', summary: '【背景】订单系统需要异步解耦。【结论】选 Kafka，放弃 RabbitMQ。', entities: ['N2'],
      facets: [{ id: 'F3', search_text: '结论', anchor_text: '选 Kafka，放弃 RabbitMQ', points: [{ id: 'P3', search_text: '吞吐量优先' }] }] },
    { id: 'E3', name: '团队周会', summary: '周会纪要：讨论了招聘进度和年假安排。', created_at: '2026-04-21T02:00:00Z' }
  ]
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'episodic-adapter-'))
  ports = {
    graph: new EmbeddedEpisodicGraphStore(),
    vectors: new EmbeddedVectorStore({ dir }),
    embedder: new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5' })
  }
  await ingestEpisodes(ports, corpus, { collectionPrefix: 'ep_', exclusive: inTurns('episodes:default') })
})
afterAll(async () => {
  await ports.embedder.close()
  await ports.vectors.close()
  await rm(dir, { recursive: true, force: true })
})

const adapter = () => createEpisodicAdapter(ports, { collectionPrefix: 'ep_', now: () => NOW })

describe('episodic adapter', () => {
  it('finds the streaming task for a question about its constraints, as a recall-bundle item', async () => {
    const { items, legs } = await adapter().retrieve({ query: '流式返回那个任务有哪些约束', top_k: 10 })
    expect(items[0]?.id).toBe('E1')
    const first = items[0]!
    expect(first.mode).toBe('episodic')
    expect(first.source).toBe('episode:E1')
    const cost = first.metadata['cost'] as number
    expect(first.score).toBeCloseTo(1 / (1 + cost), 12)
    expect(first.metadata).toMatchObject({ rank: 1, score_kind: 'bundle_cost', name: 'API 流式返回改造', time: 'May 07, 2023' })
    expect(first.text.startsWith('[May 07, 2023] [API 流式返回改造]\n【目标】')).toBe(true)
    for (const key of ['best_path', 'best_support_id', 'best_facet_id', 'best_point_id', 'best_entity_id']) expect(first.metadata).toHaveProperty(key)
    expect(legs.map((l) => l.name)).toEqual(['embedding', 'vector', 'graph'])
    expect(legs.every((l) => l.status === 'ok')).toBe(true)
    // Scores fall as costs rise, and ranks count from 1.
    for (let i = 1; i < items.length; i++) {
      expect(items[i]!.score).toBeLessThanOrEqual(items[i - 1]!.score)
      expect(items[i]!.metadata['rank']).toBe(i + 1)
    }
  })

  it('reaches an Episode with no facet or entity through its summary (difference 5)', async () => {
    const { items } = await adapter().retrieve({ query: '周会纪要 招聘进度', top_k: 10 })
    const e3 = items.find((i) => i.id === 'E3')
    expect(e3?.metadata['best_path']).toBe('direct_episode')
    expect(e3?.metadata['time']).toBe('April 21, 2026 (recorded)')
  })

  it('honours top_k and the tuning overrides', async () => {
    const one = await adapter().retrieve({ query: 'Kafka 选型结论', top_k: 1 })
    expect(one.items.map((i) => i.id)).toEqual(['E2'])
    // E3 has only its direct path, cost d(E3) + direct_episode_penalty: raising the penalty by 1.7 adds exactly 1.7.
    const cost = async (extra: Record<string, unknown>) => {
      const { items } = await adapter().retrieve({ query: '周会纪要 招聘进度', top_k: 10, ...extra })
      return items.find((i) => i.id === 'E3')!.metadata['cost'] as number
    }
    expect((await cost({ direct_episode_penalty: 2 })) - (await cost({}))).toBeCloseTo(1.7, 9)
  })

  it('refuses options out of range', async () => {
    await expect(adapter().retrieve({ query: 'x', top_k: 5, hop_cost: -1 })).rejects.toBeInstanceOf(EpisodicOptionError)
    await expect(adapter().retrieve({ query: 'x', top_k: 5, display_mode: 'full' as never })).rejects.toThrow(/display_mode/)
    await expect(adapter().retrieve({ query: 'x', top_k: 5, wide_search_top_k: 2.5 })).rejects.toThrow(/integer/)
  })

  it('answers punctuation, stop words and a bare time expression without an error', async () => {
    for (const query of ['？！。', 'the of and', '昨天', '???']) {
      const { items, legs } = await adapter().retrieve({ query, top_k: 5 })
      expect(Array.isArray(items)).toBe(true)
      expect(legs).toHaveLength(3)
    }
  })

  it('detail mode lists the explaining edges; highly_related_summary keeps the matched sections', async () => {
    const detail = await adapter().retrieve({ query: '鉴权中间件不能改', top_k: 3, display_mode: 'detail' })
    const e1 = detail.items.find((i) => i.id === 'E1')!
    const edges = e1.metadata['edges'] as Array<{ relationship_name: string }>
    expect(edges.length).toBeGreaterThan(0)
    expect(edges.every((e) => ['has_facet', 'involves_entity'].includes(e.relationship_name))).toBe(true)
    expect(e1.text).toContain('- has_facet: ')

    const related = await adapter().retrieve({ query: '鉴权中间件不能改', top_k: 3, display_mode: 'highly_related_summary', max_facets_per_episode: 1 })
    const r1 = related.items.find((i) => i.id === 'E1')!
    // One facet per Episode: the best one (变更边界, through P1), so only that section is kept.
    expect(r1.text).toBe('[May 07, 2023] [API 流式返回改造]\n【变更边界】鉴权中间件保持不变，只改响应层和测试。')
  })
})

describe('episodic adapter: both normalisation rules against a hand computation from the raw cosines', () => {
  // Two Episodes, one entity linked to E1: the pool is E1 and E2 (Episode_summary), N (Entity_name) and the
  // one edge label (RelationType). The expected costs are computed here from the stored vectors' cosines
  // with the rules of docs/episodic.md (steps 3 and 8, difference 6), not by the adapter's code.
  const prefix = 'norm_'
  const body = {
    entities: [{ id: 'NX', name: '订单数据库' }],
    episodes: [
      { id: 'EX1', name: '订单库迁移', summary: '【经过】订单数据库从旧机房迁到新集群，停机二十分钟。', entities: ['NX'] },
      { id: 'EX2', name: '团建安排', summary: '【安排】周五下午去西湖边团建，晚上聚餐。' }
    ]
  }
  const query = '订单数据库迁移停机多久'
  let graph: EmbeddedEpisodicGraphStore
  const make = () => createEpisodicAdapter({ ...ports, graph }, { collectionPrefix: prefix, now: () => NOW })

  beforeAll(async () => {
    graph = new EmbeddedEpisodicGraphStore()
    await ingestEpisodes({ ...ports, graph }, body, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
  })

  async function rawDistances(): Promise<Record<string, number>> {
    const first = await make().retrieve({ query, top_k: 10 })
    const vq = (first.items[0]!.metadata['query'] as { vector_query: string }).vector_query
    const [v] = await ports.embedder.embedQueries([vq])
    const out: Record<string, number> = {}
    for (const c of ['Episode_summary', 'Entity_name', 'RelationType_relationship_name']) {
      for (const h of await ports.vectors.search(`${prefix}${c}`, 'default', v!, 100)) out[h.id] = 1 - h.score
    }
    return out
  }

  it('query: one min-max pool over all four hits', async () => {
    const d = await rawDistances()
    expect(Object.keys(d).sort()).toEqual(['EX1', 'EX2', 'NX', '订单数据库'])
    const min = Math.min(...Object.values(d))
    const range = Math.max(...Object.values(d)) - min
    const s = (id: string) => (d[id]! - min) / range
    // EX1: min(direct s(EX1) + 0.3, entity s(NX) + ec + 0.05) where ec is the label's pooled score.
    const ex1 = Math.min(s('EX1') + 0.3, s('NX') + s('订单数据库') + 0.05)
    const { items } = await make().retrieve({ query, top_k: 10 })
    const cost = (id: string) => items.find((i) => i.id === id)!.metadata['cost'] as number
    expect(cost('EX1')).toBeCloseTo(ex1, 9)
    expect(cost('EX2')).toBeCloseTo(s('EX2') + 0.3, 9)
    expect(items.every((i) => i.metadata['normalisation'] === 'query')).toBe(true)
  })

  it('collection: each collection on its own, so the lone entity and the lone label score 0', async () => {
    const d = await rawDistances()
    const summaryMin = Math.min(d['EX1']!, d['EX2']!)
    const summaryRange = Math.max(d['EX1']!, d['EX2']!) - summaryMin
    const s = (id: string) => (d[id]! - summaryMin) / summaryRange
    // EX1: entity path 0 + 0 + 0.05 = 0.05 beats any direct path (>= 0.3).
    const { items } = await make().retrieve({ query, top_k: 10, normalisation: 'collection' })
    const item = (id: string) => items.find((i) => i.id === id)!
    expect(item('EX1').metadata['cost']).toBeCloseTo(0.05, 9)
    expect(item('EX1').metadata['best_path']).toBe('entity')
    expect(item('EX2').metadata['cost']).toBeCloseTo(s('EX2') + 0.3, 9)
    expect(items.every((i) => i.metadata['normalisation'] === 'collection')).toBe(true)
  })

  it('refuses an unknown rule, naming the allowed ones', async () => {
    await expect(make().retrieve({ query, top_k: 5, normalisation: 'global' })).rejects.toThrow('normalisation must be one of query, collection')
  })
})
