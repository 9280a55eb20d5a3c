/**
 * `npm run backfill` (docs/scale-out-state.md, "Upgrading a collection in place") upgrades a chunk collection written without the lexical leg on Qdrant, in
 * place, with a progress line; a second run has nothing to do, a run limited to one namespace leaves the others for
 * the next, and a point the service rewrites while the backfill runs keeps the service's version. Each namespace is
 * written under its documents lock (in Redis with several replicas: a write of the service waits for it) and recorded.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { main } from '../../src/cli/backfill.js'
import { loadConfig } from '../../src/config.js'
import { backfillLexicalLeg } from '../../src/providers/lexical-index/qdrant-backfill.js'
import { lexicalLegOnQdrant } from '../../src/providers/lexical-index/qdrant-wiring.js'
import { createLexicalIndexes } from '../../src/providers/lexical-index/index.js'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { generationsFor, redisFor, writeLockFor } from '../../src/shared-writes.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`backfill CLI: ${QDRANT_SKIP_LINE}`)

const unit = (i: number) => Float32Array.from({ length: 4 }, (_, d) => (d === i % 4 ? 1 : 0))
const chunk = (ns: string, id: string, text: string, extra: { title?: string } = {}) => ({
  ns, record: { id, vector: unit(Number(id.at(-1))), payload: { doc_id: id.split('#')[0]!, text, chunk_index: Number(id.at(-1)), source: `${id}.md`, ...extra } }
})
// What the embedded index is given for a chunk: its text, after its document's title (its contextual header: none
// of these chunks holds the title as a heading line of its own).
const CHUNKS = [
  chunk('default', 'a#0', '咳嗽三周以上要做胸片', { title: '咳嗽' }),
  chunk('default', 'a#1', '复查血常规，咳嗽加重再就医', { title: '咳嗽' }),
  chunk('default', 'b#0', '发热先测体温'),
  chunk('default', 'c#0', '夜间告警由二线值班处理'),
  chunk('other', 'a#0', '差旅住宿标准每晚六百元'),
  chunk('other', 'd#0', '夜间咳嗽可以喝温水')
]
const LEXICAL_TEXT: Record<string, string> = { 'default/a#0': '咳嗽\n咳嗽三周以上要做胸片', 'default/a#1': '咳嗽\n复查血常规，咳嗽加重再就医' }
const QUERIES = ['咳嗽', '体温 告警', '夜间', '住宿标准']

describe.skipIf(!url)('npm run backfill', () => {
  const prefix = `bf${process.pid}_`
  const collection = `${prefix}chunks`
  const env = { VECTOR_BACKEND: 'qdrant', QDRANT_URL: url, COLLECTION_PREFIX: prefix, DATA_DIR: tmpdir() }
  const old = new QdrantVectorStore({ url, timeoutMs: 10_000 })
  afterAll(async () => { await old.dropCollection(collection) })

  const run = async (args: string[]) => {
    const lines: string[] = []
    const out = new Writable({ write(c, _e, done) { lines.push(...String(c).split('\n').filter(Boolean)); done() } })
    return { result: await main(args, env, out), lines }
  }
  /** The embedded index over the same texts: the reference every search on Qdrant must equal. */
  const reference = async (ns: string, ids: string[]) => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-bf-'))
    const indexes = createLexicalIndexes({ dir, name: 'ref' })
    const index = indexes.get(ns)
    await index.sync(CHUNKS.filter((c) => c.ns === ns && ids.includes(c.record.id)).map((c) => ({ id: c.record.id, text: LEXICAL_TEXT[`${ns}/${c.record.id}`] ?? c.record.payload.text })))
    const answers = await Promise.all(QUERIES.map((q) => index.search(q, 10)))
    await indexes.close()
    await rm(dir, { recursive: true, force: true })
    return answers
  }
  const onQdrant = async (ns: string) => {
    const leg = lexicalLegOnQdrant(loadConfig(env), collection)
    return Promise.all(QUERIES.map((q) => leg.lexical.get(ns).search(q, 10)))
  }

  it('gives every point its lexical leg with a progress line; a second run finds nothing to do', async () => {
    await old.ensureCollection(collection, 4)
    for (const ns of ['default', 'other']) await old.write(collection, ns, { upsert: CHUNKS.filter((c) => c.ns === ns).map((c) => c.record) })
    expect((await onQdrant('default')).flat()).toEqual([])

    const first = await run(['--namespace', 'other', '--batch', '1'])
    expect(first.result).toEqual({ done: 2, total: 2, skipped: 0 })
    expect(first.lines.at(-2)).toMatch(/^backfill: 2\/2 points \(\d+ points\/s\)$/)
    expect(await onQdrant('other')).toEqual(await reference('other', ['a#0', 'd#0']))
    expect((await onQdrant('default')).flat()).toEqual([]) // left for the next run

    const second = await run(['--batch', '3'])
    expect(second.result).toEqual({ done: 4, total: 4, skipped: 0 })
    expect(second.lines.filter((l) => /^backfill: \d+\/4 points/.test(l)).length).toBeGreaterThanOrEqual(1)
    expect(await onQdrant('default')).toEqual(await reference('default', ['a#0', 'a#1', 'b#0', 'c#0']))
    // the dense vectors stay
    for (const c of CHUNKS.filter((c) => c.ns === 'default')) {
      expect((await old.search(collection, 'default', c.record.vector, 4)).map((h) => h.id)).toContain(c.record.id)
    }
    expect((await run([])).result).toEqual({ done: 0, total: 0, skipped: 0 })
    expect(await onQdrant('default')).toEqual(await reference('default', ['a#0', 'a#1', 'b#0', 'c#0']))
  })

  it('a point the service rewrites between the backfill\'s read and its write keeps the service\'s lexical leg', async () => {
    const ns = 'race'
    await old.write(collection, ns, { upsert: [chunk(ns, 'e#0', '旧文本说的是咳嗽').record, chunk(ns, 'f#0', '发热先测体温').record] })
    const leg = lexicalLegOnQdrant(loadConfig(env), collection)
    const service = new QdrantVectorStore({ url, timeoutMs: 10_000, sparse: leg.sparse })
    let calls = 0
    const result = await backfillLexicalLeg(leg.lexical.writer, collection, {
      namespace: ns,
      call: async (request) => {
        calls += 1
        // count, scroll, then the write: the service's ingest of e#0 lands just before it
        if (calls === 3) await service.write(collection, ns, { deleteDocIds: ['e'], upsert: [chunk(ns, 'e#0', '新文本说的是告警').record] })
        return request()
      }
    })
    expect(result.total).toBe(2)
    const index = leg.lexical.get(ns)
    expect((await index.search('告警', 10)).map((h) => h.id)).toEqual(['e#0'])
    expect(await index.search('咳嗽', 10)).toEqual([]) // only the old text had it
    expect((await index.search('体温', 10)).map((h) => h.id)).toEqual(['f#0'])
    await service.close()
  })

  it('reads with the configured read consistency: the count and every page ask QDRANT_READ_CONSISTENCY replicas', async () => {
    // the real Qdrant behind a pass-through that notes each request line: the consistency a read asks for is only seen there
    // (a single server, and a cluster whose replicas agree, answer alike to every consistency)
    const seen: string[] = []
    const target = new URL(url)
    const proxy = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`)
      const forward = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      forward.on('error', (error) => res.writeHead(502).end(error.message))
      req.pipe(forward)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    const port = (proxy.address() as { port: number }).port
    try {
      const ns = 'consistent'
      await old.write(collection, ns, { upsert: [chunk(ns, 'g#0', '夜间告警').record, chunk(ns, 'h#0', '住宿标准').record, chunk(ns, 'i#0', '咳嗽随访').record] })
      const lines: string[] = []
      const out = new Writable({ write(c, _e, done) { lines.push(String(c)); done() } })
      const result = await main(['--namespace', ns, '--batch', '2'], { ...env, QDRANT_URL: `http://127.0.0.1:${port}`, QDRANT_READ_CONSISTENCY: 'all' }, out)
      expect(result).toEqual({ done: 3, total: 3, skipped: 0 })
      const reads = seen.filter((line) => new RegExp(`^POST /collections/${collection}/points/(count|scroll)`).test(line))
      expect(reads.filter((line) => line.includes('/points/count')).length).toBe(1)
      expect(reads.filter((line) => line.includes('/points/scroll')).length).toBe(2)
      for (const line of reads) expect(line).toMatch(/[?&]consistency=all(&|$)/)
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
    }
  })

  it('takes the namespace\'s documents lock in Redis, as the service\'s writes do: a write of the service waits for it; the backfill is recorded', async () => {
    const ns = `lk${process.pid}`
    await old.write(collection, ns, { upsert: [chunk(ns, 'j#0', '夜间告警由二线值班处理').record] })
    // what a replica of the service builds (REPLICAS=2 over one Redis): its lock and its generations
    const replicaEnv = { ...env, REDIS_URL: inject('redisUrl'), REPLICAS: '2' }
    const config = loadConfig(replicaEnv)
    const redis = redisFor(config)!
    const generations = generationsFor(config, redis, redis, undefined)
    const serviceLock = writeLockFor(config, redis, redis)
    const leg = lexicalLegOnQdrant(config, collection)
    try {
      const before = await generations.readState('hybrid', ns)
      let locked!: () => void
      const held = new Promise<void>((resolve) => { locked = resolve })
      let release!: () => void
      const released = new Promise<void>((resolve) => { release = resolve })
      const lines: string[] = []
      const out = new Writable({ write(c, _e, done) { lines.push(String(c)); done() } })
      const backfill = main(['--namespace', ns], replicaEnv, out, { onLocked: async () => { locked(); await released } })
      await held
      const events: string[] = []
      const write = serviceLock.exclusive(`documents:${ns}`, async () => {
        // the backfill's write came first: the point holds its lexical leg when the service's write gets the lock
        events.push(`service write, leg found: ${(await leg.lexical.get(ns).search('告警', 10)).map((h) => h.id).join(',')}`)
      })
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(events).toEqual([]) // still waiting for the backfill's lock
      release()
      expect(await backfill).toEqual({ done: 1, total: 1, skipped: 0 })
      await write
      expect(events).toEqual(['service write, leg found: j#0'])
      const after = await generations.readState('hybrid', ns)
      // a hybrid write recorded: the namespace's generation moved on, and with it the version cached answers are keyed by
      expect(after.generation).toBeGreaterThan(before.generation ?? 0)
      expect(after.version).toBeDefined()
      expect(after.version).not.toBe(before.version)
    } finally {
      await leg.lexical.close()
      await generations.close()
      await redis.quit()
    }
  })

  it('refuses a bad namespace or batch, naming the value', async () => {
    await expect(run(['--namespace', 'Bad NS'])).rejects.toThrow('--namespace "Bad NS" does not match')
    await expect(run(['--batch', '0'])).rejects.toThrow('--batch "0" is not a whole number from 1 to 10000')
  })
})
