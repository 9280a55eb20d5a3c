/**
 * `POST /ingest/documents` with `on_invalid`: `reject` (the default) refuses the whole body and writes nothing;
 * `skip` writes the valid documents and answers each invalid one with its index, id and reason, answered when written
 * or as a job. What is answered as written is listed by `GET /documents`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

let t: TestApp
beforeAll(async () => { t = await buildTestApp() }, 300_000)
afterAll(async () => t?.close())

const post = (payload: object, query = '') => t.app.inject({ method: 'POST', url: `/ingest/documents${query}`, payload })
const listed = async (namespace: string) => (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json().documents.map((d: { id: string }) => d.id)

/** One body of each kind of invalid document among valid ones. */
const mixed = (namespace: string, onInvalid?: 'skip' | 'reject') => ({
  namespace, ...(onInvalid ? { on_invalid: onInvalid } : {}),
  documents: [
    { id: 'good-1', text: '# 值班说明\n\n夜间告警由二线值班处理。' },
    { id: 'bad id', text: '正文。' },
    { id: 'junk', text: `正文${'\uFFFD'.repeat(10)}` },
    { id: 'good-2', text: '发布窗口在每周二下午。', metadata: { team: 'ops' } },
    { id: 'good-1', text: '同一个 id 第二次出现。' },
    { id: 'blank', text: '   ' },
    { id: 'meta', text: '正文。', metadata: { k: { nested: true } } },
    { id: 'sub', text: '淋巴结肿大患者全胸片检查\u001a 问题：已经行ct检查' }
  ]
})

describe('on_invalid', () => {
  it('reject, the default: a 400 naming every problem, and nothing is written', async () => {
    for (const body of [mixed('rej-default'), mixed('rej-explicit', 'reject')]) {
      const r = await post(body)
      expect(r.statusCode, r.body).toBe(400)
      // the schema's first misfit, as before
      expect(r.json().message).toBe('body/documents/1/id must match pattern "^[^#\\s/][^#\\s]*$" (got "bad id")')
      expect(await listed(body.namespace)).toEqual([])
    }
  })

  it('reject with only checks past the schema: every problem named in one 400', async () => {
    const r = await post({ namespace: 'rej-checks', documents: [{ id: 'a', text: '正文。' }, { id: 'a', text: '又一篇。' }, { id: 'j', text: `正文${'\uFFFD'.repeat(10)}` }] })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toBe('documents[1].id: "a" appears twice in this request; documents[2].text (id "j"): 10 of its 12 characters (83.3%) are ' +
      'replacement or control characters, over the 0.5% allowed (MAX_JUNK_SHARE): binary data, or text read in the wrong encoding')
    expect(await listed('rej-checks')).toEqual([])
  })

  it('skip: the valid documents are written, each invalid one is answered with its index, id and reason', async () => {
    const r = await post(mixed('skip-sync', 'skip'))
    expect(r.statusCode, r.body).toBe(200)
    const answer = r.json()
    expect(answer).toMatchObject({ documents: 3, replaced: 0, unchanged: 0, normalised: [{ id: 'sub', chars: 1 }] })
    expect(answer.refused).toEqual([
      { index: 1, id: 'bad id', reason: 'body/documents/1/id must match pattern "^[^#\\s/][^#\\s]*$" (got "bad id")' },
      { index: 2, id: 'junk', reason: 'documents[2].text (id "junk"): 10 of its 12 characters (83.3%) are replacement or control characters, over the ' +
        '0.5% allowed (MAX_JUNK_SHARE): binary data, or text read in the wrong encoding' },
      { index: 4, id: 'good-1', reason: 'documents[4].id: "good-1" appears twice in this request' },
      { index: 5, id: 'blank', reason: 'documents[5].text (id "blank"): is blank' },
      { index: 6, id: 'meta', reason: 'body/documents/6/metadata/k must be one of these forms: A string, a number, a boolean or a list of strings. (got {"nested":true})' }
    ])
    expect(await listed('skip-sync')).toEqual(['good-1', 'good-2', 'sub'])
    // the first good-1 is the one written
    const hit = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'skip-sync', query: '夜间告警', top_k: 1 } })
    expect(hit.json().recall_bundle[0].id).toBe('good-1#0')
  }, 120_000)

  it('skip as a job: the refusals are in the job\'s result', async () => {
    const r = await post(mixed('skip-job', 'skip'), '?wait=false')
    expect(r.statusCode, r.body).toBe(202)
    const id = r.json().id as string
    let job = r.json()
    while (job.state === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 100))
      job = (await t.app.inject({ method: 'GET', url: `/ingest/jobs/${id}` })).json()
    }
    expect(job.state).toBe('done')
    expect(job.result.documents).toBe(3)
    expect(job.result.refused.map((d: { index: number }) => d.index)).toEqual([1, 2, 4, 5, 6])
    expect(job.result.normalised).toEqual([{ id: 'sub', chars: 1 }])
    expect(await listed('skip-job')).toEqual(['good-1', 'good-2', 'sub'])
  }, 120_000)

  it('skip with every document invalid: 200, nothing written, every one refused', async () => {
    const r = await post({ namespace: 'skip-none', on_invalid: 'skip', documents: [{ id: 'x y', text: 'a' }, { text: 'no id' }, 'not a document'] })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json()).toMatchObject({ documents: 0, chunks: 0 })
    expect(r.json().refused).toEqual([
      { index: 0, id: 'x y', reason: 'body/documents/0/id must match pattern "^[^#\\s/][^#\\s]*$" (got "x y")' },
      { index: 1, reason: "body/documents/1 must have required property 'id'" },
      { index: 2, reason: 'body/documents/2 must be object (got "not a document")' }
    ])
    expect(await listed('skip-none')).toEqual([])
  })

  it('skip still refuses a body that is wrong as a whole: a bad namespace, too many documents, a bad on_invalid, a bad query', async () => {
    const bad = [
      [{ namespace: 'Bad NS', on_invalid: 'skip', documents: [{ id: 'a', text: 'a' }] }, /namespace/],
      [{ on_invalid: 'skip', documents: Array.from({ length: 1001 }, (_, i) => ({ id: `d${i}`, text: 'a' })) }, /MAX_DOCUMENTS_PER_REQUEST/],
      [{ on_invalid: 'sometimes', documents: [{ id: 'a', text: 'a' }] }, /on_invalid/],
      [{ on_invalid: 'skip', documents: [] }, /fewer than 1 items/]
    ] as const
    for (const [body, message] of bad) {
      const r = await post(body)
      expect(r.statusCode, r.body).toBe(400)
      expect(r.json().message).toMatch(message)
    }
    const query = await post({ on_invalid: 'skip', documents: [{ id: 'x y', text: 'a' }] }, '?wait=maybe')
    expect(query.statusCode).toBe(400)
    expect(query.json().message).toMatch(/^querystring\/wait must be boolean/)
  })

  it('a request without a body, or with a JSON null, is a 400 naming the body (the API fuzzer found a 500 here)', async () => {
    for (const request of [
      { method: 'POST' as const, url: '/ingest/documents?wait=true' },
      { method: 'POST' as const, url: '/ingest/documents', headers: { 'content-type': 'application/json' }, payload: 'null' }
    ]) {
      const r = await t.app.inject(request)
      expect(r.statusCode, r.body).toBe(400)
      expect(r.json().message).toMatch(/^body/)
    }
  })
})
