/**
 * Every refusal of a documents body names the limit it hit (README, docs/formats.md "Limits"): the largest document
 * (MAX_DOCUMENT_CHARS), the most documents per request (MAX_DOCUMENTS_PER_REQUEST), the largest body
 * (BODY_LIMIT_BYTES, a 413), the largest metadata (MAX_METADATA_BYTES) and the junk share (MAX_JUNK_SHARE); each is
 * counted as a refused ingest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

let t: TestApp
beforeAll(async () => { t = await buildTestApp({ BODY_LIMIT_BYTES: String(2 * 1024 * 1024) }) }, 300_000)
afterAll(async () => t?.close())

const post = (payload: string | object) => t.app.inject({ method: 'POST', url: '/ingest/documents', headers: { 'content-type': 'application/json' }, payload })
const refusedIngests = async () => {
  const line = (await t.app.inject({ method: 'GET', url: '/metrics' })).body.split('\n').find((l) => l.startsWith('recall_ingests_total{outcome="refused"} '))
  return Number(line?.split(' ').at(-1))
}

describe('refusals name their limit', () => {
  it('a text one character over 1,000,000: 400 naming MAX_DOCUMENT_CHARS', async () => {
    const r = await post({ documents: [{ id: 'ok', text: '短文。' }, { id: 'long', text: 'a'.repeat(1_000_001) }] })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toMatch(/^body\/documents\/1\/text must NOT have more than 1000000 characters, the limit MAX_DOCUMENT_CHARS \(got "a+"… \(1000001 characters\)\)$/)
  }, 120_000)

  it('1,001 documents: 400 naming MAX_DOCUMENTS_PER_REQUEST', async () => {
    const documents = Array.from({ length: 1001 }, (_, i) => ({ id: `d${i}`, text: `第${i}篇。` }))
    const r = await post({ documents })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toBe('body/documents must NOT have more than 1000 items, the limit MAX_DOCUMENTS_PER_REQUEST (got a list of 1001 items)')
  })

  it('a body over BODY_LIMIT_BYTES: 413 naming it, counted as a refused ingest', async () => {
    const before = await refusedIngests()
    const payload = JSON.stringify({ documents: [{ id: 'huge', text: 'b'.repeat(2 * 1024 * 1024) }] })
    const r = await post(payload)
    expect(r.statusCode).toBe(413)
    expect(r.json()).toMatchObject({ code: 'RECALL_PAYLOAD_TOO_LARGE', message: 'request body is larger than 2097152 bytes (BODY_LIMIT_BYTES)' })
    expect(await refusedIngests()).toBe(before + 1)
  })

  it('metadata over 8,192 bytes and a junk text: 400 naming MAX_METADATA_BYTES and MAX_JUNK_SHARE', async () => {
    const meta = await post({ documents: [{ id: 'm', text: '正文。', metadata: { k: 'x'.repeat(8185) } }] })
    expect(meta.statusCode).toBe(400)
    expect(meta.json().message).toBe('documents[0].metadata (id "m"): 8193 bytes of JSON, over the 8192 allowed (MAX_METADATA_BYTES)')
    const junk = await post({ documents: [{ id: 'j', text: `正文${'\uFFFD'.repeat(10)}` }] })
    expect(junk.statusCode).toBe(400)
    expect(junk.json().message).toMatch(/documents\[0\]\.text \(id "j"\): .*over the 0\.5% allowed \(MAX_JUNK_SHARE\)/)
  })
})
