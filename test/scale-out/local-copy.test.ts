import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import type { QdrantLexicalIndex } from '../../src/providers/lexical-index/qdrant-namespace-index.js'
import type { LexicalLegWiring } from '../../src/providers/lexical-index/qdrant-wiring.js'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the local copy tests')

// Two replicas over one real Qdrant and Redis, the lexical leg on Qdrant with its local copy (the default). After
// writes through A, B's lexical answers must equal A's, and B must answer them from its copy once its catalog
// caught up, without reading the namespace's version a second time (the request's is handed to the leg).
describe.skipIf(!qdrantUrl)('the lexical leg\'s local copy on two replicas, and an evaluation run there', () => {
  // B catches up when a read finds a newer version (what these cases watch), not as A's writes land
  const env = { ...sharedQdrantEnv('lc', qdrantUrl), CATALOG_FOLLOW_WRITES: 'false' }
  const namespace = `lc-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  useTwoReplicas(env, (pair) => ({ a, b } = pair), countingStampReads)

  const ingest = async (t: TestApp, documents: object[]) => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
    return r.json().generation as number
  }
  const lexical = async (t: TestApp, query: string, minGeneration?: number) => {
    const r = await t.app.inject({
      method: 'POST', url: '/retrieve',
      payload: { mode: 'hybrid', namespace, top_k: 10, legs: ['lexical'], query, ...(minGeneration !== undefined ? { min_generation: minGeneration } : {}) }
    })
    expect(r.statusCode, r.body).toBe(200)
    return r.json().recall_bundle.map((i: { id: string; score: number; text: string }) => [i.id, i.score, i.text])
  }
  const indexOf = (t: TestApp): QdrantLexicalIndex => {
    const indexes = t.app.services.lexical
    if (!(indexes instanceof QdrantLexicalIndexes)) throw new Error('expected the lexical leg on Qdrant')
    return indexes.get(namespace)
  }

  it('answers from the copy once caught up, equal to the writer, with one version read per request', async () => {
    const generation = await ingest(a, [
      { id: 'cough', text: '咳嗽三周以上应做胸片检查，慢性咳嗽需要查明原因。' },
      { id: 'fever', text: '发热超过三天应就医，体温超过三十九度可用退烧药。' },
      { id: 'oncall', text: '夜间告警由二线值班处理，节假日由三线处理。' }
    ])
    const first = await lexical(a, '咳嗽检查')
    expect(first.map((h: unknown[]) => h[0])).toEqual(['cough#0'])
    // B's first read of the namespace: answered from the stores while the catalog reads it whole (a first read) in
    // the background; its copy is built after that
    let before = await catchUps(b)
    expect(await lexical(b, '咳嗽检查', generation)).toEqual(first)
    await b.app.services.catchUpDocuments(namespace)
    expect(delta(before, await catchUps(b))).toEqual({ 'namespace first-read': 1 })
    const onB = indexOf(b)
    await onB.localCopyIdle()
    expect(onB.localCopyReady).toBe(true)
    onB.recordRounds = true
    const stampReadsOfB = countStampReads()
    expect(await lexical(b, '咳嗽检查')).toEqual(first)
    // -1: answered by the local copy; the version came with the request
    expect(onB.rounds).toEqual([-1])
    expect(stampReadsOfB()).toBe(0)

    // a write through A: B's next read catches up from the change log and answers from the copy, as A does
    const second = await ingest(a, [{ id: 'cough-2', text: '慢性咳嗽的检查包括胸片、肺功能和支气管激发试验。' }])
    const expected = await lexical(a, '咳嗽检查')
    expect(expected.map((h: unknown[]) => h[0])).toContain('cough-2#0')
    before = await catchUps(b)
    const phasesBefore = await catchUpSeconds(b)
    expect(await lexical(b, '咳嗽检查', second)).toEqual(expected)
    expect(delta(before, await catchUps(b))).toEqual({ 'documents changes': 1 })
    // that catch-up's phases, each observed once: disjoint parts of it, so together no longer than it took; A's write
    // is in the write window beside the change log, so B reads nothing back from the store (docs/scale-out-state.md)
    const phasesAfter = await catchUpSeconds(b)
    expect(delta(phasesBefore.counts, phasesAfter.counts)).toEqual({ 'documents changes': 1, 'phase log': 1, 'phase queued': 1, 'phase lexical': 1 })
    const spent = (k: string) => (phasesAfter.seconds[k] ?? 0) - (phasesBefore.seconds[k] ?? 0)
    const phaseTotal = ['log', 'queued', 'store', 'lexical'].reduce((sum, p) => sum + spent(`phase ${p}`), 0)
    expect(phaseTotal).toBeGreaterThan(0)
    expect(phaseTotal).toBeLessThanOrEqual(spent('documents changes') + 1e-6)
    // the copy applies the caught-up change within a bound (else that read ranked on Qdrant); from then on it answers
    await onB.localCopyIdle()
    onB.rounds.length = 0
    expect(await lexical(b, '咳嗽检查')).toEqual(expected)
    expect(onB.rounds).toEqual([-1])
    expect(stampReadsOfB()).toBe(0)
  })

  it('an evaluation run on B reads the documents A wrote before it (the run goes past the response cache and its version read)', async () => {
    const namespace = `ev-${randomBytes(3).toString('hex')}`
    const w = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [
      { id: 'guide-cough', text: '# 咳嗽诊疗指引\n\n咳嗽持续三周以上属于慢性咳嗽，应当进行胸部X线检查。' },
      { id: 'travel', text: '# 差旅\n\n一线城市住宿标准每晚六百元。' }
    ] } })
    expect(w.statusCode, w.body).toBe(200)
    // B has never read this namespace; the run must catch it up rather than find it empty
    const judged = [{ query: '慢性咳嗽检查', relevant: { doc_ids: ['guide-cough'] } }, { query: '住宿标准', relevant: { doc_ids: ['travel'] } }]
    const r = await b.app.inject({ method: 'POST', url: '/evaluate', payload: {
      namespace, judged_set: judged.map((j) => JSON.stringify(j)).join('\n'), arms: [{ mode: 'hybrid', legs: ['lexical'] }], resamples: 100
    } })
    expect(r.statusCode, r.body).toBe(200)
    const report = r.json() as { arms: { errors: number; metrics: Record<string, { mean: number }> }[]; per_question: { first_relevant_rank: (number | null)[] }[] }
    expect(report.arms[0]!.errors).toBe(0)
    expect(report.per_question.map((q) => q.first_relevant_rank)).toEqual([[1], [1]])
  })
})

/** B's catalog catch-ups so far, from its /metrics: `<kind> <reason>` -> count. */
async function catchUps(t: TestApp): Promise<Record<string, number>> {
  return Object.fromEntries(Object.entries((await catchUpSeconds(t)).counts).filter(([k]) => !k.startsWith('phase ')))
}

/** B's catch-ups and their phases (`recall_catalog_catch_up_phase_seconds`), from its /metrics: counts and seconds by `<kind> <reason>` or `phase <name>`. */
async function catchUpSeconds(t: TestApp): Promise<{ counts: Record<string, number>; seconds: Record<string, number> }> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
  const counts: Record<string, number> = {}
  const seconds: Record<string, number> = {}
  const series = /^recall_catalog_catch_up(?:_phase)?_seconds_(count|sum)\{(?:kind="(\w+)",reason="([\w-]+)"|phase="(\w+)")\} ([\d.e+-]+)$/gm
  for (const m of text.matchAll(series)) {
    const key = m[4] ? `phase ${m[4]}` : `${m[2]} ${m[3]}`
    ;(m[1] === 'count' ? counts : seconds)[key] = Number(m[5])
  }
  return { counts, seconds }
}

const delta = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([k, n]) => [k, n - (before[k] ?? 0)]).filter(([, n]) => n !== 0))

/**
 * The reads of the namespace's version that the lexical leg of each replica makes itself (not handed by the
 * request), in the order the replicas were built (A, then B): the services' own stamp, counted.
 */
const stampReads: number[] = []
const countingStampReads = {
  lexicalWiring: (wiring: LexicalLegWiring): LexicalLegWiring => {
    const replica = stampReads.push(0) - 1
    const read = wiring.statisticsStamp!
    return {
      ...wiring,
      statisticsStamp: async (namespace) => {
        stampReads[replica]! += 1
        return read(namespace)
      }
    }
  }
}

/** B's stamp reads from now on. */
function countStampReads(): () => number {
  const at = stampReads[1]!
  return () => stampReads[1]! - at
}
