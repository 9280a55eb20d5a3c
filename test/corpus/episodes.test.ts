import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildEpisodeGraphs } from '../../src/corpus/episodes/graph-building.js'
import { deleteEpisodes } from '../../src/corpus/appliers/writers/episode-deletes.js'
import { EpisodeIngestError, validateEpisodesBody } from '../../src/corpus/episodes/validation.js'
import { episodeEntityEdgeText, facetEntityEdgeText, hasFacetEdgeText, hasPointEdgeText, truncateText } from '../../src/corpus/episodes/edge-texts.js'
import { episodeWarnings } from '../../src/corpus/episodes/warnings.js'
import { ingestEpisodes } from '../../src/corpus/appliers/writers/episodes-ingest.js'
import type { EpisodicIngestPorts } from '../../src/corpus/appliers/writers/episode-graphs.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import { inTurns } from '../helpers/turns.js'

const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')

describe('edge texts (docs/episodic.md, "Edge texts")', () => {
  it('truncates by code points, right-strips and appends an ellipsis', () => {
    expect(truncateText('  abc  ', 3)).toBe('abc')
    expect(truncateText('abcd', 3)).toBe('ab…')
    expect(truncateText('ab cd', 4)).toBe('ab…') // 'ab ' right-stripped
    expect(truncateText('鉴权中间件', 4)).toBe('鉴权中…')
    expect(truncateText(undefined, 4)).toBe('')
  })

  it('formats each edge kind', () => {
    expect(hasFacetEdgeText({ search_text: '变更边界', description: '只改响应层' })).toBe('变更边界: 只改响应层')
    expect(hasFacetEdgeText({ search_text: '变更边界' })).toBe('变更边界')
    expect(hasPointEdgeText('变更边界', { search_text: '鉴权不能改', description: '安全要求' })).toBe('变更边界 -> 鉴权不能改: 安全要求')
    expect(hasPointEdgeText('变更边界', { search_text: '鉴权不能改' })).toBe('变更边界 -> 鉴权不能改')
    expect(episodeEntityEdgeText('API', '对外接口')).toBe('API | 对外接口')
    expect(episodeEntityEdgeText('API')).toBe('API')
    expect(facetEntityEdgeText('API', '对外接口', '变更边界')).toBe('API | 对外接口 (in: 变更边界)')
    expect(facetEntityEdgeText('API', null, '变更边界')).toBe('API (in: 变更边界)')
    expect(facetEntityEdgeText('API', '对外接口', '')).toBe('API | 对外接口')
    expect(facetEntityEdgeText('API', '', '')).toBe('API')
    // 301 characters of description: 299 kept plus the ellipsis.
    expect(hasFacetEdgeText({ search_text: 'x', description: 'a'.repeat(301) })).toBe(`x: ${'a'.repeat(299)}…`)
  })
})

describe('validateEpisodesBody', () => {
  const ok = { entities: [{ id: 'N1', name: 'API' }], episodes: [{ id: 'E1', name: 'n', summary: 's', entities: ['N1'], facets: [] }] }

  it('accepts a valid body, and an Episode without facets or entities', () => {
    expect(validateEpisodesBody(ok)).toEqual([])
    expect(validateEpisodesBody({ episodes: [{ id: 'E1', name: 'n', summary: 's' }] })).toEqual([])
  })

  it('names the field and the item of every unknown reference', () => {
    const body = {
      entities: [{ id: 'N1', name: 'API' }],
      episodes: [
        { id: 'E0', name: 'n', summary: 's' },
        { id: 'E1', name: 'n', summary: 's' },
        { id: 'E2', name: 'n', summary: 's', entities: ['N7'], facets: [
          { id: 'F1', search_text: 't', entities: ['N1', 'N9'] }
        ] }
      ]
    }
    expect(validateEpisodesBody(body)).toEqual([
      'episodes[2].entities[0]: unknown entity "N7"',
      'episodes[2].facets[0].entities[1]: unknown entity "N9"'
    ])
  })

  it('accepts references to stored entities and refuses stored ids of another type', () => {
    const body = { episodes: [{ id: 'E1', name: 'n', summary: 's', entities: ['N5', 'E9'] }] }
    expect(validateEpisodesBody(body, new Map([['N5', 'Entity'], ['E9', 'Episode']]))).toEqual([
      'episodes[0].entities[1]: "E9" is a Episode, not an entity'
    ])
  })

  it('reports blank texts, bad times and duplicate ids, each with the value refused', () => {
    const body = {
      entities: [{ id: 'X', name: '' }],
      episodes: [{ id: 'X', name: 'n', summary: 's', mentioned_time_start: 'yesterday', mentioned_time_end: '2024-01-01T00:00:00Z',
        facets: [{ id: 'F', search_text: ' ', points: [{ id: 'F', search_text: 'p' }] }] }]
    }
    expect(validateEpisodesBody(body)).toEqual([
      'entities[0].name: must not be empty (got "")',
      'episodes[0].mentioned_time_start: must be an ISO 8601 time (got "yesterday")',
      'episodes[0].id: duplicate id "X" (also entities[0])',
      'episodes[0].facets[0].search_text: must not be empty (got " ")',
      'episodes[0].facets[0].points[0].id: duplicate id "F" (also episodes[0].facets[0])'
    ])
  })

  it.each([
    ['not an object', null, 'body must be object (got null)'],
    ['no episodes', {}, "body must have required property 'episodes'"],
    ['a missing name', { episodes: [{ id: 'E', summary: 's' }] }, "body/episodes/0 must have required property 'name'"],
    ['a confidence over 1', { episodes: [{ id: 'E', name: 'n', summary: 's', mentioned_time_confidence: 2 }] },
      'body/episodes/0/mentioned_time_confidence must be <= 1 (got 2)'],
    // The schema of POST /ingest/episodes takes facets as objects only; the CLI and the demo loader now agree.
    ['a facet given as a string id', { episodes: [{ id: 'E', name: 'n', summary: 's', facets: ['F1'] }] },
      'body/episodes/0/facets/0 must be object (got "F1")'],
    ['a time range with one end', { episodes: [{ id: 'E', name: 'n', summary: 's', mentioned_time_start: '2024-01-01' }] },
      'episodes[0]: mentioned_time_start and mentioned_time_end go together (got only mentioned_time_start)'],
    ['an end before the start', { episodes: [{ id: 'E', name: 'n', summary: 's', mentioned_time_start: '2024-02-01', mentioned_time_end: '2024-01-01' }] },
      'episodes[0].mentioned_time_end: 2024-01-01 is before mentioned_time_start 2024-02-01']
  ])('%s: %s', (_label, body, problem) => {
    expect(validateEpisodesBody(body)).toEqual([problem])
  })
})

describe('entity links with their own description (difference 7)', () => {
  const body = {
    entities: [{ id: 'N1', name: '鉴权中间件', description: '共用的令牌校验组件' }],
    episodes: [
      { id: 'E1', name: '流式返回改造', summary: 's', entities: [{ id: 'N1', description: '本次改造只动它的响应层' }],
        facets: [{ id: 'F1', search_text: '流式返回改造的变更边界', entities: [{ id: 'N1', description: '保持不变' }] }] },
      { id: 'E2', name: '令牌故障', summary: 's', entities: ['N1'] }
    ]
  }

  it('puts the link description in the edge text and keeps it on the edge; a bare id uses the entity\'s', () => {
    const [e1, e2] = buildEpisodeGraphs(body).episodes
    const link = (ep: typeof e1, from: string) => ep!.edges.find((e) => e.relationship_name === 'involves_entity' && e.from === from)!
    expect(link(e1, 'E1')).toMatchObject({ edge_text: '鉴权中间件 | 本次改造只动它的响应层', description: '本次改造只动它的响应层' })
    expect(link(e1, 'F1')).toMatchObject({ edge_text: '鉴权中间件 | 保持不变 (in: 流式返回改造的变更边界)', description: '保持不变' })
    expect(link(e2, 'E2').edge_text).toBe('鉴权中间件 | 共用的令牌校验组件')
    expect(link(e2, 'E2')).not.toHaveProperty('description')
  })

  it('refuses a description over 2,000 characters, naming the Episode and the entity', () => {
    const long = { episodes: [{ id: 'E9', name: 'n', summary: 's', entities: [{ id: 'N1', description: '长'.repeat(2001) }],
      facets: [{ id: 'F9', search_text: 'x', entities: [{ id: 'N1', description: '短'.repeat(2000) }] }] }], entities: [{ id: 'N1', name: 'n' }] }
    expect(validateEpisodesBody(long)).toEqual([
      'episodes[0].entities[0].description: 2001 characters, over the 2000 allowed (Episode "E9", entity "N1")'
    ])
  })
})

describe('ingest warnings (m-flow\'s input rules)', () => {
  const facet = (id: string, search_text: string) => ({ id, search_text })
  it('names short labels, labels owned by more than 2 Episodes, and links without a description', () => {
    const body = {
      entities: [{ id: 'N1', name: 'Kafka' }],
      episodes: [
        { id: 'E1', name: 'a', summary: 's', entities: ['N1', { id: 'N1', description: '' }],
          facets: [facet('F1', '结果'), facet('F2', 'Kafka 迁移完成后的端到端延迟变化')] },
        { id: 'E2', name: 'b', summary: 's', facets: [{ ...facet('F3', '结果'), entities: [{ id: 'N1', description: '积压的消费组' }] }] },
        { id: 'E3', name: 'c', summary: 's', entities: [{ id: 'N1', description: '迁移的目标' }], facets: [facet('F4', '迁移的对账结果')] }
      ]
    }
    // 结果 is owned by E1 and E2 here and by E7 and E1 in the store; E1 is replaced by this body, so 3 owners.
    const warnings = episodeWarnings(body as never, new Map([['结果', ['E1', 'E7']]]))
    expect(warnings.map((w) => w.field)).toEqual([
      'episodes[0].facets[0].search_text', 'episodes[0].facets[0].search_text', 'episodes[0].entities[0]', 'episodes[0].entities[1]',
      'episodes[1].facets[0].search_text', 'episodes[1].facets[0].search_text'
    ])
    expect(warnings[0]!.message).toMatch(/"结果" is 2 characters/)
    expect(warnings[1]!.message).toMatch(/shared by 3 Episodes \("E1", "E2", "E7"\)/)
    expect(warnings[2]!.message).toMatch(/Episode "E1" to entity "N1" has no description/)
    // 迁移的对账结果 (7 characters, one owner) and the described links raise nothing.
    expect(episodeWarnings({ episodes: [body.episodes[2]!] } as never)).toEqual([])
  })
})

describe('ingestEpisodes and deleteEpisodes on the embedded stores with the real model', () => {
  let dir: string
  let ports: EpisodicIngestPorts
  const prefix = 'test_'
  const count = (c: string) => ports.vectors.count(`${prefix}${c}`, 'default')

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ingest-episodes-'))
    ports = {
      graph: new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') }),
      vectors: new EmbeddedVectorStore({ dir: join(dir, 'vectors') }),
      embedder: new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5' })
    }
  })
  afterAll(async () => {
    await ports.embedder.close()
    await ports.vectors.close()
    await ports.graph.close()
    await rm(dir, { recursive: true, force: true })
  })

  const body = {
    entities: [{ id: 'N1', name: 'API', description: '对外接口' }, { id: 'N2', name: 'Kafka' }],
    episodes: [
      { id: 'E1', name: 'API 流式返回改造', summary: '【目标】把接口改成流式返回。【变更边界】鉴权中间件保持不变。',
        mentioned_time_start: '2023-05-07T00:00:00Z', mentioned_time_end: '2023-05-08T00:00:00Z', entities: ['N1'],
        facets: [{ id: 'F1', search_text: '变更边界', anchor_text: '鉴权中间件保持不变', entities: ['N1'],
          points: [{ id: 'P1', search_text: '鉴权中间件不能改' }] }] },
      { id: 'E2', name: '消息队列选型', summary: '在 Kafka 和 RabbitMQ 之间选择。', entities: ['N1', 'N2'],
        facets: [{ id: 'F2', search_text: '选型结论', points: [{ id: 'P2', search_text: '选 Kafka' }] }] }
    ]
  }

  it('writes the graph and the six collections, with the owners as doc ids', async () => {
    const result = await ingestEpisodes(ports, body, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect(result).toMatchObject({ episodes: 2, facets: 2, points: 2, entities: 2, edges: 8 })
    expect(await ports.graph.countByType('default')).toEqual({ Entity: 2, Episode: 2, Facet: 2, FacetPoint: 2 })
    expect(await count('Episode_summary')).toBe(2)
    expect(await count('Facet_search_text')).toBe(2)
    expect(await count('Facet_anchor_text')).toBe(1)
    expect(await count('FacetPoint_search_text')).toBe(2)
    expect(await count('Entity_name')).toBe(2)
    // 8 edges; E1 and E2 both link N1 with the label 'API | 对外接口', so 7 distinct labels.
    expect(await count('RelationType_relationship_name')).toBe(7)
    const points: Array<{ id: string; doc_id: string; text: string }> = []
    for await (const r of ports.vectors.scroll(`${prefix}FacetPoint_search_text`, 'default')) points.push({ id: r.id, doc_id: r.payload.doc_id, text: r.payload.text })
    expect(points).toEqual([{ id: 'P1', doc_id: 'E1', text: '鉴权中间件不能改' }, { id: 'P2', doc_id: 'E2', text: '选 Kafka' }])
    const labels: string[] = []
    for await (const r of ports.vectors.scroll(`${prefix}RelationType_relationship_name`, 'default')) labels.push(r.payload.text)
    expect(labels).toContain('变更边界 -> 鉴权中间件不能改')
    expect(labels).toContain('API | 对外接口 (in: 变更边界)')
    expect(labels).toContain('API | 对外接口')
  })

  it('is idempotent: the same body again changes no count', async () => {
    await ingestEpisodes(ports, body, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect(await ports.graph.countByType('default')).toEqual({ Entity: 2, Episode: 2, Facet: 2, FacetPoint: 2 })
    expect(await count('Episode_summary')).toBe(2)
    expect(await count('RelationType_relationship_name')).toBe(7)
  })

  it('refuses unknown references with every problem and writes nothing', async () => {
    const bad = { episodes: [{ id: 'E3', name: 'n', summary: 's', entities: ['N1', 'N9'], facets: [{ id: 'F3', search_text: 't', entities: ['N8'] }] }] }
    const error = await ingestEpisodes(ports, bad, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(EpisodeIngestError)
    expect((error as EpisodeIngestError).problems).toEqual([
      'episodes[0].entities[1]: unknown entity "N9"',
      'episodes[0].facets[0].entities[0]: unknown entity "N8"'
    ])
    expect(await count('Episode_summary')).toBe(2)
    expect((await ports.graph.nodeTypes('default', ['E3', 'F3'])).size).toBe(0)
  })

  it('answers warnings beside the counts, counting the stored owners of a label, and writes anyway', async () => {
    const result = await ingestEpisodes(ports, { episodes: [
      { id: 'W1', name: 'w', summary: '另一件事的变更边界', facets: [{ id: 'WF1', search_text: '变更边界' }] },
      { id: 'W2', name: 'w', summary: '第三件事的变更边界', facets: [{ id: 'WF2', search_text: '变更边界' }] }
    ] }, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect(result.episodes).toBe(2)
    // 变更边界: 4 characters, and owned by E1 (stored), W1 and W2.
    expect(result.warnings.map((w) => w.field)).toEqual([
      'episodes[0].facets[0].search_text', 'episodes[0].facets[0].search_text',
      'episodes[1].facets[0].search_text', 'episodes[1].facets[0].search_text'
    ])
    expect(result.warnings[1]!.message).toMatch(/shared by 3 Episodes \("E1", "W1", "W2"\)/)
    expect(result.warnings_total).toBe(4)
    await deleteEpisodes(ports, ['W1', 'W2'], { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
  })

  it('links a stored entity by id and accepts an Episode with no facet or entity', async () => {
    await ingestEpisodes(ports, { episodes: [
      { id: 'E3', name: '周会', summary: '周会纪要，没有结构。' },
      { id: 'E4', name: 'Kafka 扩容', summary: '给 Kafka 加分区。', entities: ['N2'] }
    ] }, { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect((await ports.graph.describe('default', ['N2'])).nodes.has('E4')).toBe(true)
    expect(await count('Episode_summary')).toBe(4)
  })

  it('deleting an Episode removes its facets, points and vectors and keeps shared entities', async () => {
    const result = await deleteEpisodes(ports, ['E2', 'nope'], { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect(result).toEqual({ deleted: ['E2'], not_found: ['nope'] })
    expect(Object.fromEntries(await ports.graph.nodeTypes('default', ['E2', 'F2', 'P2', 'N1', 'N2']))).toEqual({ N1: 'Entity', N2: 'Entity' })
    expect(await count('Episode_summary')).toBe(3)
    expect(await count('Facet_search_text')).toBe(1)
    expect(await count('FacetPoint_search_text')).toBe(1)
    expect(await count('Entity_name')).toBe(2)
    // E2's own labels go: has_facet 选型结论, has_point 选型结论 -> 选 Kafka, API | 对外接口 stays (E1 uses it),
    // 'Kafka' stays (E4 uses it).
    const labels: string[] = []
    for await (const r of ports.vectors.scroll(`${prefix}RelationType_relationship_name`, 'default')) labels.push(r.payload.text)
    expect(labels).not.toContain('选型结论')
    expect(labels).not.toContain('选型结论 -> 选 Kafka')
    expect(labels).toContain('API | 对外接口')
    expect(labels).toContain('Kafka')
  })

  it('an entity left without any edge goes with its vector', async () => {
    await deleteEpisodes(ports, ['E4'], { collectionPrefix: prefix, exclusive: inTurns('episodes:default') })
    expect((await ports.graph.nodeTypes('default', ['N2'])).size).toBe(0)
    expect(await count('Entity_name')).toBe(1)
  })
})
