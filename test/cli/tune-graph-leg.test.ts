/**
 * `npm run tune` chooses hybrid's `graph` leg per namespace (issue #41, item 1), the CLI run as a child process against
 * a listening app, on the embedded stores and on Qdrant + Neo4j + Redis. Expected choices worked out from the texts:
 *
 * - `helps`: each question asks what a person's system uses (周立负责的系统用哪种数据库？). The passage that answers it
 *   (青鸟的持久层选了 PostgreSQL 十五版…) shares no analyzer token with the question, title included, so the lexical
 *   leg never returns it; a weekly note repeating the question word for word is first in the lexical leg and nearer
 *   the question's vector than the answer, so under every two-leg setting the note is ahead: MRR@10 at most 1/2. The
 *   imported graph links the person (no chunk of their own) to the system by 负责, and the system cites the answer:
 *   the graph leg lists the answer alone, so convex with graph_weight 2/3 gives it at least 2/3 and every other chunk
 *   at most 1/3: first, MRR@10 1. Strictly better: `graph` is kept and stored as the namespace's `legs`.
 * - `plain`: each question is its answer passage's own sentence, first in both legs under every setting (MRR@10,
 *   Recall@5 and nDCG@10 all 1); the derived graph (headings are entities) is tried, and cannot do better: a tie, so
 *   two legs are stored.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedRedisEnv } from '../helpers/two-replicas.js'

const SYSTEMS = [
  { person: '周立', system: '青鸟', doc: 'qingniao', answer: '青鸟的持久层选了 PostgreSQL 十五版，夜里两点做全量备份。', question: '周立负责的系统用哪种数据库？', note: '这周的会上没有谈到，下周再议。' },
  { person: '韩梅', system: '白塔', doc: 'baita', answer: '白塔的消息队列换成了 Kafka，分区数设为六十四。', question: '韩梅负责的系统用的是什么中间件？', note: '组里还在比较，月底给结论。' },
  { person: '钱进', system: '金梭', doc: 'jinsuo', answer: '金梭的前端框架定为 Vue 三，打包交给 Vite。', question: '钱进负责的系统用什么界面技术？', note: '还没有定下来。' }
]
const HELPS = {
  documents: SYSTEMS.flatMap((s, i) => [
    { id: s.doc, source: `systems/${s.doc}.md`, text: `# ${s.system}\n\n${s.answer}` },
    { id: `weekly-${i}`, source: `weekly/${i}.md`, text: `# ${s.person}的周报\n\n${s.question.replace('？', '')}，${s.note}` }
  ]),
  graph: {
    entities: SYSTEMS.flatMap((s, i) => [{ id: `p${i}`, name: s.person }, { id: `s${i}`, name: s.system, source_chunk_ids: [`${s.doc}#0`] }]),
    relations: SYSTEMS.map((_, i) => ({ source: `p${i}`, target: `s${i}`, type: '负责' }))
  },
  judged: SYSTEMS.map((s, i) => ({ id: `h${i}`, query: s.question, relevant: { ids: [`${s.doc}#0`] } }))
}
const PLAIN = {
  documents: [
    { id: 'canteen', source: 'life/canteen.md', text: '# 食堂\n\n食堂每天七点开门，周末不营业。' },
    { id: 'parking', source: 'life/parking.md', text: '# 停车\n\n访客车辆停在东门外的停车场。' },
    { id: 'library', source: 'life/library.md', text: '# 图书馆\n\n图书馆的借书期限是三十天，可以续借一次。' },
    { id: 'gym', source: 'life/gym.md', text: '# 健身房\n\n健身房需要提前一天在小程序上预约。' }
  ],
  judged: [
    { id: 'c', query: '食堂每天七点开门，周末不营业', relevant: { ids: ['canteen#0'] } },
    { id: 'p', query: '访客车辆停在东门外的停车场', relevant: { ids: ['parking#0'] } },
    { id: 'l', query: '图书馆的借书期限是三十天，可以续借一次', relevant: { ids: ['library#0'] } }
  ]
}
const GRAPH = ['vector', 'lexical', 'graph']

function tune(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/tune.ts', ...args], { env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('close', (code) => resolve({ code, output }))
  })
}

const qdrantUrl = runQdrantUrl('tune-graph-leg (qdrant+neo4j+redis)')
const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  {
    name: 'qdrant+neo4j+redis', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `tune_${randomBytes(3).toString('hex')}_`,
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), ...sharedRedisEnv(),
      GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000', EMBEDDING_TIMEOUT_MS: '30000'
    })
  }
]

for (const backend of backends) {
  describe.skipIf(backend.skip === true)(`npm run tune and the graph leg (${backend.name})`, () => {
    let t: TestApp
    let url: string
    let dir: string
    const helps = `tune-helps-${randomBytes(3).toString('hex')}`
    const plain = `tune-plain-${randomBytes(3).toString('hex')}`
    const post = async (path: string, payload: object) => {
      const r = await t.app.inject({ method: 'POST', url: path, payload })
      expect(r.statusCode, r.body).toBe(200)
      return r.json()
    }
    const ask = (namespace: string, query: string, more: object = {}) => post('/retrieve', { mode: 'hybrid', namespace, query, top_k: 5, ...more })
    const defaultsOf = async (namespace: string) => (await t.app.inject({ method: 'GET', url: `/namespaces/${namespace}/retrieval-defaults` })).json()

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'recall-tune-'))
      t = await buildTestApp({ CACHE_TTL_SECONDS: '0', RATE_LIMIT_MAX: '0', ...backend.env() })
      await t.app.listen({ port: 0, host: '127.0.0.1' })
      url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
      await post('/ingest/documents', { namespace: helps, documents: HELPS.documents })
      await post('/ingest/graph', { namespace: helps, ...HELPS.graph })
      await post('/ingest/documents', { namespace: plain, documents: PLAIN.documents })
      for (const [name, judged] of [['helps', HELPS.judged], ['plain', PLAIN.judged]] as const) {
        await writeFile(join(dir, `${name}.jsonl`), judged.map((q) => JSON.stringify(q)).join('\n'))
      }
    }, 240_000)
    afterAll(async () => {
      for (const namespace of [helps, plain]) await t?.app.services.writePath.write(namespace, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      for (const namespace of [helps, plain]) await t?.app.inject({ method: 'DELETE', url: `/namespaces/${namespace}/retrieval-defaults` })
      await t?.close()
      await rm(dir, { recursive: true, force: true })
    })

    it('keeps the graph leg where only the graph reaches the answer, and a request without legs then runs it', async () => {
      const run = await tune([join(dir, 'helps.jsonl'), '--namespace', helps, '--folds', '3', '--apply', '--url', url, '--out', join(dir, 'helps.json')])
      expect(run.code, run.output).toBe(0)
      expect(run.output).toMatch(/^ {2}vector,lexical {8}held out MRR@10/m)
      expect(run.output).toMatch(/^ {2}vector,lexical,graph {2}held out MRR@10 1\.0000/m)
      expect(run.output).toContain('graph leg kept: better on mrr_at_10 (1.0000 against')
      const report = JSON.parse(await readFile(join(dir, 'helps.json'), 'utf8'))
      expect(report.by_legs[0].fit.best.figures.mrr_at_10).toBeLessThanOrEqual(0.5)
      expect(report.by_legs[1].fit.best.figures.mrr_at_10).toBe(1)

      const stored = await defaultsOf(helps)
      expect(stored.hybrid.legs).toEqual(GRAPH)
      expect(stored.stored_in).toBe(backend.name === 'embedded' ? 'file' : 'redis')
      for (const s of SYSTEMS) {
        // no `legs`: the namespace's, with the graph leg; the stored fit ranks every answer first (MRR 1 in-sample)
        const body = await ask(helps, s.question)
        expect(body.legs.map((l: { name: string; status: string }) => `${l.name}:${l.status}`)).toEqual(['embedding:ok', 'vector:ok', 'lexical:ok', 'graph:ok'])
        expect(body.recall_bundle[0].id).toBe(`${s.doc}#0`)
        expect(body.recall_bundle[0].metadata.graph_paths[0]).toMatchObject({ entity_name: s.system, hop: 1, relation: { type: '负责' } })
        // the request's own legs win: two legs, the weekly note first
        const two = await ask(helps, s.question, { legs: ['vector', 'lexical'] })
        expect(two.legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'lexical'])
        expect(two.recall_bundle[0].id).not.toBe(`${s.doc}#0`)
      }
      // GET takes the namespace's legs too
      const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&namespace=${helps}&q=${encodeURIComponent(SYSTEMS[0]!.question)}` })
      expect(r.json().legs.at(-1)).toMatchObject({ name: 'graph', status: 'ok' })
    }, 240_000)

    it('keeps two legs on a tie: the graph is tried and cannot beat answers already first', async () => {
      const run = await tune([join(dir, 'plain.jsonl'), '--namespace', plain, '--folds', '3', '--apply', '--url', url])
      expect(run.code, run.output).toBe(0)
      expect(run.output).toMatch(/^ {2}vector,lexical {8}held out MRR@10 1\.0000 {2}R@1 1\.0000 {2}R@5 1\.0000/m)
      expect(run.output).toContain('graph leg not kept: a tie with two legs keeps two legs')
      expect((await defaultsOf(plain)).hybrid.legs).toEqual(['vector', 'lexical'])
      const body = await ask(plain, PLAIN.judged[0]!.query)
      expect(body.legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'lexical'])
      expect(body.recall_bundle[0].id).toBe('canteen#0')
    }, 240_000)
  })
}
