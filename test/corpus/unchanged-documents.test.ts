/**
 * A document the namespace already holds exactly as sent costs nothing: it is reported `unchanged`, no passage is
 * embedded, nothing is written, and the write is not recorded (an answer cached before it is still served).
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'

let t: TestApp
const embedded: string[] = []
beforeAll(async () => {
  t = await buildTestApp({}, (p) => ({
    ...p,
    embedder: Object.assign(Object.create(p.embedder) as typeof p.embedder, {
      embedPassages: (texts: readonly string[]) => {
        embedded.push(...texts)
        return p.embedder.embedPassages(texts)
      }
    })
  }))
}, 300_000)
afterAll(async () => t?.close())

const ingest = async (documents: object[]) => {
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'unchanged', documents } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { documents: number; chunks: number; replaced: number; unchanged: number; generation?: number }
}
const ask = async () => (await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'unchanged', query: '值班 告警', legs: ['lexical'] } })).json() as { cached: boolean }

describe('re-ingesting unchanged documents', () => {
  const oncall = { id: 'oncall', source: 'ops/oncall.md', text: '# 值班\n\n夜间告警由二线值班处理。\n\n# 升级\n\n十五分钟无人响应则升级。' }
  const travel = { id: 'travel', text: '# 差旅\n\n一线城市住宿每晚不超过六百元。' }

  it('embeds and writes nothing, reports each document unchanged, records no write', async () => {
    const first = await ingest([oncall, travel])
    expect(first).toMatchObject({ documents: 2, chunks: 3, replaced: 0, unchanged: 0 })
    expect(embedded).toHaveLength(3)
    await ask()
    expect((await ask()).cached).toBe(true)

    const again = await ingest([oncall, travel])
    expect(again).toMatchObject({ documents: 2, chunks: 3, replaced: 0, unchanged: 2, generation: first.generation })
    expect(embedded).toHaveLength(3)
    expect((await ask()).cached, 'no write was recorded: the cached answer stands').toBe(true)
  })

  it('a document whose text, title, source or metadata changed is written again; the others stay unchanged', async () => {
    // a new text or title changes the embedded passage (the title is its header); a new source or metadata does not,
    // so the stored vector is kept
    for (const [changed, embeds] of [
      [{ ...travel, text: '# 差旅\n\n一线城市住宿每晚不超过七百元。' }, 1],
      [{ ...travel, text: '# 差旅\n\n一线城市住宿每晚不超过七百元。', title: '差旅标准' }, 1],
      [{ ...travel, text: '# 差旅\n\n一线城市住宿每晚不超过七百元。', title: '差旅标准', source: 'finance/travel.md' }, 0],
      [{ ...travel, text: '# 差旅\n\n一线城市住宿每晚不超过七百元。', title: '差旅标准', source: 'finance/travel.md', metadata: { year: 2026 } }, 0]
    ] as const) {
      const before = embedded.length
      expect(await ingest([oncall, changed])).toMatchObject({ documents: 2, replaced: 1, unchanged: 1 })
      expect(embedded.length - before, JSON.stringify(changed)).toBe(embeds)
    }
  })

  it('POST /documents/unchanged answers, by fingerprint, which documents an ingest would find unchanged, and writes nothing', async () => {
    // the fingerprint as docs/write-path.md defines it, computed here apart from the service's code
    const fingerprint = (d: { id: string; text: string; source?: string; title?: string; metadata?: object }) =>
      `d1:${createHash('sha256').update(JSON.stringify([d.id, d.text, d.source ?? d.id, d.title ?? null, d.metadata ?? null]), 'utf8').digest('hex')}`
    const namespace = 'fingerprints'
    const ask = (documents: Array<{ id: string; fingerprint: string }>) =>
      t.app.inject({ method: 'POST', url: '/documents/unchanged', payload: { namespace, documents } })
    const tagged = { ...travel, metadata: { year: 2026, team: 'ops' } }
    const first = (await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [oncall, tagged] } })).json() as { generation: number }
    const before = embedded.length

    const r = await ask([
      { id: 'oncall', fingerprint: fingerprint(oncall) },
      { id: 'travel', fingerprint: fingerprint({ ...tagged, text: '# 差旅\n\n一线城市住宿每晚不超过七百元。' }) },
      { id: 'absent', fingerprint: fingerprint({ id: 'absent', text: '没有这篇。' }) },
      { id: 'travel', fingerprint: fingerprint(tagged) }
    ])
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json()).toEqual({
      namespace,
      documents: [
        // two sections, each well under a chunk: two chunks
        { id: 'oncall', held: true, unchanged: true, chunks: 2 },
        { id: 'travel', held: true, unchanged: false },
        { id: 'absent', held: false, unchanged: false },
        { id: 'travel', held: true, unchanged: true, chunks: 1 }
      ],
      generation: first.generation
    })
    // metadata keys in another order, a title given: another fingerprint (the body would be sent, and found unchanged)
    const reordered = (await ask([{ id: 'travel', fingerprint: fingerprint({ ...tagged, metadata: { team: 'ops', year: 2026 } }) }])).json()
    expect(reordered.documents).toEqual([{ id: 'travel', held: true, unchanged: false }])
    expect(embedded.length, 'asking embeds nothing').toBe(before)

    const bad = await ask([{ id: 'oncall', fingerprint: 'sha256-abc' }])
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('fingerprint')
  })
})
