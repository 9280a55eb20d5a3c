import { readFileSync } from 'node:fs'
import { Ajv } from 'ajv'
import { getEncoding } from 'js-tiktoken'
import { contextBodyExamples, contextResponseExamples } from '../../../src/schemas/context-examples.js'
import { ContextResponseSchema } from '../../../src/schemas/context.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { cmrcParagraphs, CMRC_TRIAL, describeWith } from '../../helpers/reference-data.js'

const paragraphs = (await cmrcParagraphs()).slice(0, 6)
const episodes = JSON.parse(readFileSync('demo/episodes.json', 'utf8')) as Record<string, unknown>

const auth = { authorization: 'Bearer k-all' }
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: 'k-all,k-a=tenant-a' })
  expect((await t.app.inject({ method: 'POST', url: '/ingest/episodes', headers: auth, payload: episodes })).statusCode).toBe(200)
}, 300_000)
afterAll(async () => t?.close())

const post = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/context', payload, headers })

describe('POST /context', () => {
  it('episodic: the context follows the display mode', async () => {
    const ask = async (display_mode: string) => {
      const retrieve = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: '流式返回那个任务有哪些约束', top_k: 2, episodic: { display_mode } } })
      const packed = await post({ mode: 'episodic', query: '流式返回那个任务有哪些约束', top_k: 2, max_tokens: 8000, format: 'text', episodic: { display_mode } })
      expect(packed.statusCode, packed.body).toBe(200)
      return { items: retrieve.json().recall_bundle as { text: string }[], context: packed.json().context as string }
    }
    for (const mode of ['summary', 'detail']) {
      const { items, context } = await ask(mode)
      expect(items.length).toBeGreaterThan(0)
      for (const item of items) expect(context).toContain(item.text.trim())
    }
  })

  it('refuses what it cannot do with a 400 that names the field and the allowed values', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ tokenizer: 'gpt2' }, /body\/tokenizer must be equal to one of the allowed values: o200k_base, cl100k_base, characters/],
      [{ format: 'html' }, /body\/format must be equal to one of the allowed values: markdown, xml, text, jsonl/],
      [{ max_tokens: 0 }, /body\/max_tokens must be >= 1/],
      [{ max_tokens: 1_000_001 }, /body\/max_tokens must be <= 1000000/],
      [{ max_tokens: undefined }, /body must have required property 'max_tokens'/]
    ]
    for (const [over, message] of cases) {
      const r = await post({ mode: 'hybrid', query: '测试', max_tokens: 100, ...over })
      expect(r.statusCode, JSON.stringify(over)).toBe(400)
      expect(r.json()).toMatchObject({ statusCode: 400, code: 'RECALL_BAD_REQUEST', error: 'Bad Request' })
      expect(r.json().message).toMatch(message)
    }
  })

  it('every Swagger UI example body is accepted, and every example answer fits the response schema', async () => {
    for (const [name, example] of Object.entries(contextBodyExamples)) {
      const r = await post(example.value, { authorization: 'Bearer k-all' })
      expect(r.statusCode, `${name}: ${r.body}`).toBe(200)
      expect(r.json().format).toBe(example.value.format)
    }
    const check = new Ajv({ strict: false, allErrors: true }).compile(ContextResponseSchema)
    for (const [name, example] of Object.entries(contextResponseExamples)) expect(check(example.value), `${name}: ${JSON.stringify(check.errors)}`).toBe(true)
  })

  it('a key scoped to another namespace gets the same 403 as /retrieve', async () => {
    const body = { mode: 'hybrid', query: '测试', max_tokens: 100, namespace: 'default' }
    const ctx = await post(body, { authorization: 'Bearer k-a' })
    const ret = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '测试', namespace: 'default' }, headers: { authorization: 'Bearer k-a' } })
    expect(ctx.statusCode).toBe(403)
    expect(ctx.json()).toEqual(ret.json())
  })
})

describeWith(CMRC_TRIAL)('POST /context over CMRC paragraphs and a graph that cites them', () => {
  beforeAll(async () => {
    const docs = paragraphs.map((text, i) => ({ id: `cmrc-${i}`, source: `cmrc/${i}.md`, text }))
    expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', headers: auth, payload: { documents: docs } })).statusCode).toBe(200)
    // two entities citing the same chunk
    const graph = {
      entities: [
        { id: 'e-a', name: '甲实体', description: '第一个实体', source_chunk_ids: ['cmrc-0#0', 'cmrc-1#0'] },
        { id: 'e-b', name: '乙实体', description: '第二个实体', source_chunk_ids: ['cmrc-0#0', 'cmrc-2#0'] }
      ],
      relations: [{ source: 'e-a', target: 'e-b', type: '相关', description: '甲与乙相关' }]
    }
    expect((await t.app.inject({ method: 'POST', url: '/ingest/graph', headers: auth, payload: graph })).statusCode).toBe(200)
  }, 300_000)

  it('packs a hybrid bundle within max_tokens as js-tiktoken counts it, for every format', async () => {
    const reference = getEncoding('o200k_base')
    for (const format of ['markdown', 'xml', 'text', 'jsonl']) {
      for (const max_tokens of [120, 400, 1500]) {
        const r = await post({ mode: 'hybrid', query: paragraphs[1]!.slice(0, 30), top_k: 6, max_tokens, format })
        expect(r.statusCode, r.body).toBe(200)
        const body = r.json()
        expect(reference.encode(body.context, [], []).length).toBe(body.tokens)
        expect(body.tokens).toBeLessThanOrEqual(max_tokens)
        expect(body.manifest).toHaveLength(6)
        expect(body.citations.map((c: { marker: number }) => c.marker)).toEqual(body.citations.map((_: unknown, i: number) => i + 1))
        expect(body).toMatchObject({ mode: 'hybrid', format, tokenizer: 'o200k_base', max_tokens })
      }
    }
  })

  it('graphrag: each entity brings its evidence chunks, and a chunk two entities cite is packed once', async () => {
    const r = await post({ mode: 'graphrag', query: '甲实体和乙实体', max_tokens: 4000, format: 'xml', max_evidence_per_item: 5 })
    expect(r.statusCode, r.body).toBe(200)
    const body = r.json()
    const shared = paragraphs[0]!.slice(0, 40)
    expect(body.context.split(shared).length - 1).toBe(1)
    const kinds = body.citations.map((c: { kind: string; id: string }) => `${c.kind}:${c.id}`)
    expect(kinds).toEqual(expect.arrayContaining(['item:e-a', 'item:e-b', 'evidence:cmrc-0#0', 'evidence:cmrc-1#0', 'evidence:cmrc-2#0']))
    expect(kinds.filter((k: string) => k === 'evidence:cmrc-0#0')).toHaveLength(1)
    const second = body.manifest[1]
    expect(second.evidence.find((e: { chunk_id: string }) => e.chunk_id === 'cmrc-0#0')).toMatchObject({ status: 'duplicate', reason: 'duplicate' })
  })

  it('a budget too small for even one item is a 400 saying how many tokens it needs', async () => {
    const r = await post({ mode: 'hybrid', query: paragraphs[1]!.slice(0, 30), max_tokens: 5 })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toMatchObject({ code: 'RECALL_CONTEXT_BUDGET_TOO_SMALL' })
    const needed = Number(/max_tokens >= (\d+)/.exec(r.json().message)![1])
    const ok = await post({ mode: 'hybrid', query: paragraphs[1]!.slice(0, 30), max_tokens: needed })
    expect(ok.statusCode, ok.body).toBe(200)
    expect(ok.json().tokens).toBeLessThanOrEqual(needed)
  })
})
