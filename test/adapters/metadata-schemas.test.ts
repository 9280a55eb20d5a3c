/**
 * Every mode's items carry exactly the metadata its definition declares (adapters/<mode>/spec.ts): no field
 * the schema does not list (it would be dropped by the serializer, or published by nobody), and every listed
 * field emitted by some item, so the published schema cannot drift from what the adapters emit.
 */
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MODE_DEFINITIONS } from '../../src/modes.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

let t: TestApp
beforeAll(async () => {
  // entity vectors on: a graphrag question below reaches an entity by meaning alone (matched_by: meaning)
  t = await buildTestApp({ ENTITY_VECTORS: 'true' })
  const ingest = async (url: string, payload: Record<string, unknown>) => {
    const r = await t.app.inject({ method: 'POST', url, payload })
    expect(r.statusCode, r.body).toBe(200)
  }
  await ingest('/ingest/documents', {
    documents: [
      { id: 'guide', title: '咳嗽指南', source: 'clinical/guide.md', text: '# 咳嗽\n\n咳嗽三周以上应做胸片检查。', metadata: { lang: 'zh' } },
      { id: 'plain', source: 'ops/plain.md', text: '值班说明：夜间告警由二线值班处理。' },
      // a PDF's text as the CLI reads it, a form feed between its two pages: its one chunk runs over both
      { id: 'paged', source: 'manual.pdf', text: '设备开机后自检约需九十秒。\n\f\n自检失败时指示灯变为橙色。', metadata: { format: 'pdf', pages: 2 } }
    ]
  })
  await ingest('/ingest/graph', {
    entities: [{ id: 'pku', name: '北京大学', aliases: ['北大'], source_chunk_ids: ['guide#0'] }, { id: 'bj', name: '北京', description: '城市', source_chunk_ids: ['plain#0'] }],
    relations: [{ source: 'pku', target: 'bj', type: '位于', description: '海淀区' }]
  })
  await t.app.services.writePath.entityNamesIdle()
  await ingest('/ingest/episodes', {
    entities: [{ id: 'N1', name: 'API' }],
    episodes: [{
      id: 'E1', name: 'API 流式返回改造', summary: '【目标】接口改为流式返回。【变更边界】鉴权中间件保持不变。',
      created_at: '2026-04-20T10:00:00Z', mentioned_time_start: '2026-04-19T00:00:00Z', mentioned_time_end: '2026-04-20T00:00:00Z',
      entities: [{ id: 'N1', description: '改造的接口' }],
      facets: [{ id: 'F1', search_text: 'API 流式返回改造的变更边界', anchor_text: '鉴权中间件保持不变', points: [{ id: 'P1', search_text: '鉴权中间件不能改' }] }]
    }]
  })
  // a chat: its sessions are derived Episodes whose items carry the turns they rest on (docs/conversations.md)
  await ingest('/ingest/conversations', {
    conversations: [{ id: 'chat', sessions: [{ id: 's1', time: '2023年5月8日 下午1:56', turns: [
      { id: 't1', speaker: '王芳', text: '我昨天带孩子去动物园看了熊猫。' }, { id: 't2', speaker: '刘强', text: '上周六我在公司加班修数据库。' }
    ] }] }]
  })
})
afterAll(async () => t.close())

/** The schema with every object closed, except where the schema itself leaves one open. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (!schema || typeof schema !== 'object') return schema
  const s = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]))
  if (s.type === 'object' && s.properties && s.additionalProperties === undefined) s.additionalProperties = false
  return s
}

const QUESTIONS: Record<string, Array<Record<string, unknown>>> = {
  hybrid: [{ query: '咳嗽三周以上做什么检查' }, { query: '夜间告警', fusion: 'rrf' }, { query: '设备开机自检' },
    { query: '北京大学的咳嗽检查', legs: ['vector', 'lexical', 'graph'] }],
  graphrag: [{ query: '北京大学在哪里' }, { query: '城市' }, { query: '一所北方的名校' }],
  episodic: [{ query: '流式返回改造有哪些约束' }, { query: '鉴权中间件', episodic: { display_mode: 'detail' } },
    { query: '谁去动物园看熊猫了', structures: 'both' }]
}

describe('item metadata against each mode\'s declared schema', () => {
  for (const definition of MODE_DEFINITIONS) {
    it(`${definition.name}: every item validates closed, and every declared field is emitted`, async () => {
      const validate = new Ajv({ strict: false, allErrors: true }).compile(closed(JSON.parse(JSON.stringify(definition.metadata))) as object)
      const seen = new Set<string>()
      for (const question of QUESTIONS[definition.name]!) {
        const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: definition.name, top_k: 5, ...question } })
        expect(r.statusCode, r.body).toBe(200)
        const items = r.json().recall_bundle as Array<{ metadata: Record<string, unknown> }>
        expect(items.length, `${definition.name}: ${JSON.stringify(question)}`).toBeGreaterThan(0)
        for (const item of items) {
          expect(validate(item.metadata), JSON.stringify(validate.errors)).toBe(true)
          for (const key of Object.keys(item.metadata)) seen.add(key)
        }
      }
      expect([...seen].sort()).toEqual(Object.keys(definition.metadata.properties).sort())
    })
  }
})
