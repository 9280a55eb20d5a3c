import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Providers } from '../../src/services.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { comparableHybrid, runQdrantUrl, sharedQdrantEnv } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the first-read tests')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([p.then(() => true, () => true), sleep(ms).then(() => false)])
}

// Replica B starts over stores replica A filled. B's read of the namespace's catalog (the whole-namespace scroll of
// the vector store, seconds at 100k chunks) is held open here by a gate in front of that one call: the real
// Qdrant answers it once the gate opens. While it is held, an unfiltered hybrid retrieve through B must answer,
// and answer what A (whose catalog is read) answers; a retrieve with a source filter and the document list wait
// for the read, then answer as A does. Expected values: A's answers to the same requests.
describe.skipIf(!qdrantUrl)('a retrieve during a replica\'s first read of a namespace (the stores answer meanwhile)', () => {
  const env = sharedQdrantEnv('fr', qdrantUrl)
  const namespace = `fr-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => { open = resolve })
  let wholeReads = 0

  // A second namespace whose first whole read on B fails once; the first count of it (the store view's, made as
  // the read starts) answers only after that failure (at most 2 s later), so a retrieve meets a failed read.
  const failing = `${namespace}-f`
  let failReads = 1
  let readFailed: () => void = () => {}
  const failed = new Promise<void>((resolve) => { readFailed = resolve })
  let failingCounts = 0

  const gated = (p: Providers): Providers => {
    const scroll = p.vectors.scroll.bind(p.vectors)
    const count = p.vectors.count.bind(p.vectors)
    p.vectors.scroll = (collection, ns, docIds) => {
      if (ns === failing && docIds === undefined && failReads > 0) {
        failReads -= 1
        return (async function* () {
          readFailed()
          throw new Error('the first read of this namespace fails here')
        })()
      }
      if (ns !== namespace || docIds !== undefined) return scroll(collection, ns, docIds)
      wholeReads += 1
      return (async function* () {
        await gate
        yield* scroll(collection, ns)
      })()
    }
    p.vectors.count = async (collection, ns) => {
      if (ns === failing && failingCounts++ === 0) await Promise.race([failed, sleep(2_000)])
      return count(collection, ns)
    }
    return p
  }

  beforeAll(async () => {
    a = await buildTestApp(env)
    const documents = [
      { id: 'cough', source: 'clinical/cough.md', text: '咳嗽三周以上应做胸片检查，夜间咳嗽加重需排查哮喘。' },
      { id: 'fever', source: 'clinical/fever.md', text: '发热超过三天应就医，体温超过三十九度可用退烧药。' },
      { id: 'claims', source: 'admin/claims.md', text: '门诊报销需要提交发票和病历，胸片检查费用按比例报销。' },
      { id: 'visits', source: 'admin/visits.md', text: '随访安排在出院后两周，咳嗽未缓解者提前复诊。' }
    ]
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
    b = await buildTestApp(env, gated)
  })
  afterAll(async () => {
    open()
    await b?.close()
    await a?.close()
  })

  const storeViewReads = async (t: TestApp) =>
    Number(/^recall_store_view_reads_total (\d+)$/m.exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? NaN)

  it('answers unfiltered retrieves from the stores while the read is held, and the rest once it is done', async () => {
    // B's start-up began the read in the background, and it is held
    const deadline = Date.now() + 5_000
    while (wholeReads === 0 && Date.now() < deadline) await sleep(10)
    expect(wholeReads).toBe(1)
    expect(b.app.services.documents.get(namespace)).toBeUndefined()

    const questions = ['咳嗽胸片检查', '报销发票', '发热退烧']
    for (const query of questions) {
      for (const legs of [['vector', 'lexical'], ['lexical']]) {
        const expected = await comparableHybrid(a, namespace, { query, legs })
        expect(expected.recall_bundle.length).toBeGreaterThan(0)
        const during = comparableHybrid(b, namespace, { query, legs })
        expect(await settlesWithin(during, 5_000), `"${query}" (${legs.join('+')}) waited for the held read`).toBe(true)
        expect(await during).toEqual(expected)
      }
    }
    expect(await storeViewReads(b)).toBe(questions.length * 2)
    expect(b.app.services.documents.get(namespace)).toBeUndefined()

    // a source filter and the list are the catalog's: they wait
    const filter = { filter: { source_prefix: 'admin/' } }
    const filtered = comparableHybrid(b, namespace, { query: '咳嗽胸片检查', ...filter })
    const listed = b.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })
    expect(await settlesWithin(Promise.all([filtered, listed]).catch(() => undefined), 500)).toBe(false)
    open()
    expect(await filtered).toEqual(await comparableHybrid(a, namespace, { query: '咳嗽胸片检查', ...filter }))
    expect((await listed).json().documents.map((d: { id: string }) => d.id)).toEqual(['claims', 'cough', 'fever', 'visits'])

    // the read done, the catalog answers: no store view, the same answers
    expect(b.app.services.documents.get(namespace)).toBeDefined()
    const before = await storeViewReads(b)
    expect(await comparableHybrid(b, namespace, { query: questions[0] })).toEqual(await comparableHybrid(a, namespace, { query: questions[0] }))
    expect(await storeViewReads(b)).toBe(before)
    expect(wholeReads).toBe(1)
  })

  it('a first read that fails leaves the retrieve answered from the stores, never as an empty namespace', async () => {
    const documents = [
      { id: 'cough', text: '咳嗽三周以上应做胸片检查，夜间咳嗽加重需排查哮喘。' },
      { id: 'claims', text: '门诊报销需要提交发票和病历，胸片检查费用按比例报销。' }
    ]
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: failing, documents } })
    expect(r.statusCode, r.body).toBe(200)
    const query = '胸片检查'
    const expected = await comparableHybrid(a, failing, { query })
    expect(expected.recall_bundle.map((i: { id: string }) => i.id).sort()).toEqual(['claims#0', 'cough#0'])
    expect(await comparableHybrid(b, failing, { query })).toEqual(expected)
    expect(failReads).toBe(0)
    expect(b.app.services.documents.get(failing)).toBeUndefined()
    // the next read succeeds: B's catalog holds the namespace, and answers as A does
    await b.app.services.catchUpDocuments(failing)
    expect(b.app.services.documents.get(failing)?.has('cough')).toBe(true)
    expect(await comparableHybrid(b, failing, { query })).toEqual(expected)
  })
})
