/**
 * The entity-names write reads only the entities the graph's writes touched (src/corpus/entity-name-ledger.ts, issue
 * 44), yet must leave the entity collection exactly as a whole reconcile does (docs/derivation.md, "Entities found by
 * meaning"): one record per distinct text of every name and alias of the graph, the text normalised as the matcher
 * does (NFKC, Latin lowercased, trimmed), the record id the text's SHA-256 (32 hex characters). The expected
 * collection is worked out here from the graph's own `names()` after each step, by that rule; random sequences of
 * graph upserts and deletes, document writes and deletes (whose derivation changes the derived graph), an imported
 * entity taking a derived id, a namespace drop and a failing embedder go through the one write path, on the embedded
 * stores with the real model.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyEntityNames } from '../../src/corpus/appliers/entity-names.js'
import { entityCollectionOf, EntityNameFailures } from '../../src/corpus/entity-vectors.js'
import { exclusiveOf, InProcessWriteLock } from '../../src/corpus/write-lock.js'
import { entityNameKey } from '../../src/kernel/entity-names.js'
import type { Providers } from '../../src/services.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

/** Texts that meet under the matcher's normalisation: ALPHA, Ａｌｐｈａ and " alpha " are one text; so are 北大 and " 北大". */
const TEXTS = ['Alpha', 'ALPHA', 'Ａｌｐｈａ', ' alpha ', '年假', '带薪年休假', '北大', ' 北大', '北京大学', '青禾科技', '财务总监', '鉴权中间件', 'Redis', '  ']
const SENTENCES = [
  '青禾科技的财务总监负责审批住宿超标。', '年假由人事部管理。', '平台组负责鉴权中间件，鉴权中间件使用Redis。',
  '北京大学位于海淀区。', 'Alpha团队与青禾科技合作开发鉴权中间件。', '差旅报销需要财务总监签字。'
]

function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
}

describe('the entity-names write from what changed', () => {
  let t: TestApp
  let failNames = false
  /** The namespaces whose whole names the service read (the test's own reads are not counted). */
  const namesRead: string[] = []
  let testReads = false
  beforeAll(async () => {
    t = await buildTestApp({ ENTITY_VECTORS: 'true', DERIVED_GRAPH: 'true' }, (p: Providers) => ({
      ...p,
      graph: new Proxy(p.graph, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver)
          if (key === 'names') {
            return (namespace: string, signal?: AbortSignal) => {
              if (!testReads) namesRead.push(namespace)
              return target.names(namespace, signal)
            }
          }
          return typeof value === 'function' ? value.bind(target) : value
        }
      }),
      embedder: new Proxy(p.embedder, {
        get(target, key, receiver) {
          if (key === 'embedPassages') {
            return async (texts: readonly string[]) => {
              if (failNames) throw new Error('the embedder is down (test)')
              return target.embedPassages(texts)
            }
          }
          const value = Reflect.get(target, key, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        }
      })
    }))
  }, 300_000)
  afterAll(async () => t?.close())

  const services = () => t.app.services
  const collection = () => entityCollectionOf(t.config.collectionPrefix)

  async function graphNames(ns: string) {
    testReads = true
    try {
      return await services().graph.names(ns)
    } finally {
      testReads = false
    }
  }
  /** What a whole reconcile makes the collection hold: the graph's every name and alias, by the rule above. */
  async function expected(ns: string): Promise<Map<string, string>> {
    const want = new Map<string, string>()
    for (const e of await graphNames(ns)) {
      for (const raw of [e.name, ...e.aliases]) {
        const text = entityNameKey(raw)
        if (text !== '') want.set(createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32), text)
      }
    }
    return want
  }
  async function held(ns: string): Promise<Map<string, string>> {
    const records = new Map<string, string>()
    for await (const r of services().vectors.scroll(collection(), ns)) records.set(r.id, r.payload.text as string)
    return records
  }

  for (const seed of [1, 2, 3]) {
    it(`after each write of a random sequence (seed ${seed}), the collection holds exactly what a whole reconcile gives`, async () => {
      const ns = `inc-${seed}`
      const random = rng(seed)
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
      const ids = Array.from({ length: 8 }, (_, i) => `e${i}`)
      const docs = Array.from({ length: 5 }, (_, i) => `doc-${i}`)
      const write = services().writePath
      let derivedSeen = 0
      for (let step = 0; step < 30; step++) {
        const roll = random()
        const what = roll < 0.35 ? 'graph' : roll < 0.5 ? 'delete' : roll < 0.75 ? 'document' : roll < 0.85 ? 'forget document' : roll < 0.93 ? 'take a derived id' : roll < 0.96 ? 'drop' : 'embedder down'
        if (what === 'graph') {
          const entities = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(ids)).filter((id, i, all) => all.indexOf(id) === i)
            .map((id) => ({ id, name: pick(TEXTS.filter((x) => x.trim() !== '')), aliases: Array.from({ length: Math.floor(random() * 3) }, () => pick(TEXTS)).filter((a) => a.trim() !== '') }))
          await write.write(ns, { kind: 'graph', op: 'upsert', body: { entities } })
        } else if (what === 'delete') {
          await write.write(ns, { kind: 'graph', op: 'delete', ids: [pick(ids), pick([...ids, 'never'])] })
        } else if (what === 'document') {
          const text = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(SENTENCES)).join('')
          await write.write(ns, { kind: 'documents', op: 'upsert', documents: [{ id: pick(docs), text }] })
        } else if (what === 'forget document') {
          await write.write(ns, { kind: 'documents', op: 'delete', ids: [pick(docs)] })
        } else if (what === 'take a derived id') {
          // an imported entity over a derived one's id: the derived entity's name goes, the imported one's comes
          const derived = (await graphNames(ns)).filter((e) => e.derived)
          if (derived.length > 0) await write.write(ns, { kind: 'graph', op: 'upsert', body: { entities: [{ id: pick(derived).id, name: pick(['北大', 'ALPHA', '新名字']) }] } })
        } else if (what === 'drop') {
          await write.write(ns, { kind: 'namespace', op: 'drop' })
        } else {
          // a run that fails part-way leaves its names pending; the next write's run must still end right
          failNames = true
          try {
            await write.write(ns, { kind: 'graph', op: 'upsert', body: { entities: [{ id: pick(ids), name: pick(['差旅报销', '出差报销', '住宿超标']), aliases: [pick(TEXTS.slice(0, 4))] }] } })
            await write.entityNamesIdle()
          } finally {
            failNames = false
          }
          await write.write(ns, { kind: 'graph', op: 'delete', ids: ['never'] })
        }
        await write.entityNamesIdle()
        derivedSeen += (await graphNames(ns)).filter((e) => e.derived).length
        expect(await held(ns), `seed ${seed}, step ${step} (${what})`).toEqual(await expected(ns))
      }
      expect(derivedSeen, 'the sequence derived entities').toBeGreaterThan(0)
      // a whole reconcile of the same stores finds nothing to do
      const again = await applyEntityNames({ graph: services().graph, vectors: services().vectors, embedder: services().embedder }, ns, {
        collection: collection(), failures: new EntityNameFailures(), exclusive: exclusiveOf(new InProcessWriteLock(), `entities:${ns}`)
      })
      expect(again).toEqual({ embedded: 0, removed: 0 })
      expect(await services().entityVectors!.namespace(ns)).toMatchObject({ pending: 0, failed: 0 })
    }, 300_000)
  }

  it('reads the whole namespace\'s names once, at its first run; later writes read only the entities they touched', async () => {
    const ns = 'inc-reads'
    const write = services().writePath
    await write.write(ns, { kind: 'graph', op: 'upsert', body: { entities: [{ id: 'a', name: '年假' }] } })
    await write.entityNamesIdle()
    const first = namesRead.filter((n) => n === ns).length
    expect(first).toBe(1)
    await write.write(ns, { kind: 'graph', op: 'upsert', body: { entities: [{ id: 'b', name: '北大', aliases: ['北京大学'] }] } })
    await write.write(ns, { kind: 'documents', op: 'upsert', documents: [{ id: 'd', text: SENTENCES[2]! }] })
    await write.write(ns, { kind: 'graph', op: 'delete', ids: ['a'] })
    await write.entityNamesIdle()
    expect(namesRead.filter((n) => n === ns).length).toBe(first)
    expect(await held(ns)).toEqual(await expected(ns))
    // a rebuild of the names is a repair: the whole namespace again
    expect((await write.write(ns, { kind: 'rebuild', op: 'rebuild', ids: ['d'], channels: ['entity_vectors'] })).missing).toEqual([])
    expect(namesRead.filter((n) => n === ns).length).toBe(first + 1)
  }, 300_000)
})
