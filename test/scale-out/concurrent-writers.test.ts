import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the concurrent-writers tests')

// Two replicas (app instances) over one real Qdrant and the run's Redis write the same document ids at once,
// each its own version: every document must end as one whole version, in the store and in both catalogs.
describe.skipIf(!qdrantUrl)('two replicas writing the same document id at once', () => {
  const env = { ...sharedQdrantEnv('cw', qdrantUrl), REPLICAS: process.env.CW_REPLICAS ?? '2' }
  const namespace = `race-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  useTwoReplicas(env, (pair) => ({ a, b } = pair))

  // Version `v` of document `id` has `n` chunks (one heading section each), each saying whose it is.
  const version = (id: string, v: string, n: number) => ({
    id, text: Array.from({ length: n }, (_, i) => `# 第${i + 1}节\n\n文档 ${id} 的版本 ${v}，第 ${i + 1} 段。`).join('\n\n')
  })
  const ids = Array.from({ length: 6 }, (_, i) => `doc-${i}`)

  it('each document ends as one whole version: no chunk of the other, none missing, none left over', async () => {
    const writes = await Promise.all(ids.flatMap((id) => [
      a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [version(id, 'A', 2)] } }),
      b.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [version(id, 'B', 5)] } })
    ]))
    for (const w of writes) expect(w.statusCode, w.body).toBe(200)

    const stored = new Map<string, string[]>()
    const { collection } = a.app.services.documents.get(namespace)!
    for await (const { payload } of a.app.services.vectors.scroll(collection, namespace)) {
      stored.set(payload.doc_id, [...(stored.get(payload.doc_id) ?? []), payload.text])
    }
    for (const id of ids) {
      const texts = stored.get(id) ?? []
      const versions = new Set(texts.map((t) => /版本 ([AB])/.exec(t)?.[1]))
      expect(versions.size, `${id}: ${texts.join(' | ')}`).toBe(1)
      expect(texts.length, `${id}: ${texts.join(' | ')}`).toBe(versions.has('A') ? 2 : 5)
    }
    const list = async (t: TestApp) => (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json().documents
    const expected = ids.map((id) => ({ id, source: id, title: '第1节', chunks: stored.get(id)!.length }))
    expect(await list(a)).toEqual(expected)
    expect(await list(b)).toEqual(expected)
  })
})
