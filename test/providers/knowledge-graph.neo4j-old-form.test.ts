/**
 * A derived graph written by the Neo4j store before it kept each item's parts as part nodes (one `derived_json` property
 * per item, rewritten whole on every write touching it), read and then written by today's store. The old graph is made
 * by the old store itself: its sources at OLD_FORM_COMMIT, taken from git, run against the same server. Every answer is
 * compared with the embedded store given the same writes (the port's other implementation), before and after today's
 * store writes; the items those writes touch become parts, the others stay as they were.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'
import { Neo4jKnowledgeGraphStore } from '../../src/providers/knowledge-graph/neo4j.js'
import type { KgContribution, KnowledgeGraphStore } from '../../src/providers/knowledge-graph/port.js'
import { createNeo4jConnection } from '../../src/providers/neo4j/connection.js'

/** The last commit whose Neo4j store wrote a derived item's parts as `derived_json`. */
const OLD_FORM_COMMIT = 'e744ec5'
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const uri = inject('neo4jUri')
const hasOldCommit = (() => {
  try {
    execFileSync('git', ['-C', ROOT, 'cat-file', '-e', `${OLD_FORM_COMMIT}^{commit}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()
if (!hasOldCommit) console.warn(`knowledge-graph.neo4j-old-form: skipped, commit ${OLD_FORM_COMMIT} is not in this clone's history (a shallow clone)`)

const NS = 'docs'
const entity = (key: string, name: string, chunk: string, mentions: number, extra: { type?: string; description?: string } = {}) =>
  ({ key, name, chunk_ids: [chunk], mentions, ...extra })
const relation = (source: string, target: string, type: string, chunk: string, count: number) => ({ source, target, type, chunk_ids: [chunk], count })
/** Eight documents citing one hub (鉴权中间件), fields given by different documents, relations shared and not. */
const contribution = (i: number): KgContribution => ({
  entities: [
    entity('鉴权中间件', '鉴权中间件', `doc-${i}#0`, 1 + (i % 3), i % 3 === 1 ? { type: '组件' } : i % 4 === 2 ? { description: `鉴权中间件，第 ${i} 篇的说法。` } : {}),
    entity(`服务${i % 3}`, `服务${i % 3}`, `doc-${i}#1`, 1, i === 5 ? { type: '系统' } : {}),
    ...(i % 2 === 0 ? [entity('redis', 'Redis', `doc-${i}#1`, 2, { type: '术语' })] : [])
  ],
  relations: [
    relation(`服务${i % 3}`, '鉴权中间件', '使用', `doc-${i}#1`, 1 + (i % 2)),
    ...(i % 2 === 0 ? [relation('鉴权中间件', 'redis', '依赖', `doc-${i}#1`, 1)] : [])
  ]
})

describe.skipIf(!hasOldCommit)('Neo4j knowledge graph: a derived graph of the old form (derived_json), written by the old store', () => {
  const prefix = `O${randomBytes(6).toString('hex')}`
  let oldTree: string
  let store: Neo4jKnowledgeGraphStore
  let reference: EmbeddedKnowledgeGraphStore
  const connection = () => createNeo4jConnection({ uri, timeoutMs: 30_000 })

  beforeAll(async () => {
    // the old sources, importing this checkout's packages
    oldTree = await mkdtemp(join(tmpdir(), 'recall-old-kg-'))
    execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${OLD_FORM_COMMIT} src | tar -x -C "${oldTree}"`])
    await symlink(join(ROOT, 'node_modules'), join(oldTree, 'node_modules'))
    const old = await import(pathToFileURL(join(oldTree, 'src/providers/knowledge-graph/neo4j.ts')).href) as { Neo4jKnowledgeGraphStore: typeof Neo4jKnowledgeGraphStore }
    const oldStore = new old.Neo4jKnowledgeGraphStore({ connection: connection(), labelPrefix: prefix })
    reference = new EmbeddedKnowledgeGraphStore()
    const writes: Array<Map<string, KgContribution>> = [
      new Map([0, 1, 2, 3].map((i) => [`doc-${i}`, contribution(i)])),
      new Map([4, 5, 6, 7].map((i) => [`doc-${i}`, contribution(i)])),
      new Map([['doc-2', contribution(6)]])
    ]
    try {
      for (const s of [oldStore, reference] as KnowledgeGraphStore[]) {
        await s.upsert(NS, { entities: [{ id: 'imported-1', name: '鉴权中间件手册', aliases: ['手册'], source_chunk_ids: ['manual#0'] }] })
        for (const write of writes) await s.replaceDerived(NS, write)
      }
    } finally {
      await oldStore.close()
    }
    store = new Neo4jKnowledgeGraphStore({ connection: connection(), labelPrefix: prefix })
  }, 240_000)

  afterAll(async () => {
    await store?.close()
    await reference?.close()
    if (oldTree) await rm(oldTree, { recursive: true, force: true })
    const c = connection()
    try {
      for (const label of ['KgEntity', 'KgMeta', 'KgDoc', 'KgEntityPart', 'KgRelationPart']) await c.run(`MATCH (n:${prefix}_${label}) DETACH DELETE n`)
      const p = `${prefix.toLowerCase()}_kg_`
      for (const [shown, kind] of [['CONSTRAINTS', 'CONSTRAINT'], ['INDEXES', 'INDEX']] as const) {
        const names = (await c.run(`SHOW ${shown} YIELD name RETURN name`, {}, 'READ')).records.map((r) => String(r.get('name')))
        for (const name of names.filter((n) => n.startsWith(p))) await c.run(`DROP ${kind} ${name} IF EXISTS`)
      }
    } finally {
      await c.close()
    }
  })

  const docs = Array.from({ length: 9 }, (_, i) => `doc-${i}`)
  /** Every read of the port, of both stores. */
  const answers = async (s: KnowledgeGraphStore) => ({
    derived: await s.derivedOf(NS, docs),
    names: await s.names(NS),
    count: await s.count(NS),
    neighbourhood: await s.neighbourhood(NS, ['d:鉴权中间件', 'd:服务1', 'imported-1']),
    entities: await s.getEntities(NS, ['d:鉴权中间件', 'd:redis', 'd:服务0', 'imported-1']),
    keywords: await s.searchKeywords(NS, ['鉴权', '中间', '服务', 'redis', '说法'], 20),
    typed: await s.searchKeywords(NS, ['鉴权', '中间', '服务', 'redis'], 20, { types: ['组件', '系统'] })
  })
  /** What the database holds of each item's form: ids still carrying `derived_json`, ids with part nodes. */
  const forms = async () => {
    const c = connection()
    try {
      const json = await c.run(
        `CALL { MATCH (e:${prefix}_KgEntity {ns: $ns}) WHERE e.derived_json IS NOT NULL RETURN e.id AS id
                UNION MATCH ()-[r:${prefix}_KG_REL {ns: $ns}]->() WHERE r.derived_json IS NOT NULL RETURN r.id AS id } RETURN id ORDER BY id`, { ns: NS }, 'READ')
      const parts = await c.run(
        `CALL { MATCH (p:${prefix}_KgEntityPart {ns: $ns}) RETURN p.item AS id UNION MATCH (p:${prefix}_KgRelationPart {ns: $ns}) RETURN p.item AS id }
         RETURN id ORDER BY id`, { ns: NS }, 'READ')
      return { json: json.records.map((r) => String(r.get('id'))), parts: parts.records.map((r) => String(r.get('id'))) }
    } finally {
      await c.close()
    }
  }

  it('reads the old form as the embedded store answers the same writes', async () => {
    expect((await forms()).parts).toEqual([])
    expect((await forms()).json).toContain('d:鉴权中间件')
    expect(await answers(store)).toEqual(await answers(reference))
  })

  it('derived writes turn the items they change into parts, leave the others as they were, and answer as the embedded store', async () => {
    const before = await forms()
    const writes: Array<Map<string, KgContribution>> = [
      // doc-1 gave the hub its type: another document's type comes first now
      new Map([['doc-1', { entities: [entity('鉴权中间件', '鉴权中间件', 'doc-1#3', 4)], relations: [] }]]),
      // doc-0 goes (it gave the hub its name first); doc-8 is new
      new Map([['doc-0', { entities: [], relations: [] }], ['doc-8', contribution(9)]]),
      // doc-4 and doc-7 go: 服务1 keeps doc-1's part
      new Map([['doc-4', { entities: [], relations: [] }], ['doc-7', { entities: [], relations: [] }]])
    ]
    for (const [i, write] of writes.entries()) {
      const answer = await store.replaceDerived(NS, write)
      expect(answer, `write ${i}`).toEqual(await reference.replaceDerived(NS, write))
      expect(await answers(store), `after write ${i}`).toEqual(await answers(reference))
    }
    const after = await forms()
    // the hub and the items the writes touched are parts now; items no write touched keep derived_json
    expect(after.json).not.toContain('d:鉴权中间件')
    expect(after.parts).toContain('d:鉴权中间件')
    expect(after.json).toEqual(['d:服务2', 'd:服务2-[使用]->d:鉴权中间件'])
    expect(after.json.every((id) => before.json.includes(id))).toBe(true)
    // a store opened again reads the mixed graph the same
    const again = new Neo4jKnowledgeGraphStore({ connection: connection(), labelPrefix: prefix })
    try {
      expect(await answers(again)).toEqual(await answers(reference))
    } finally {
      await again.close()
    }
  })

  it('a derived write of a document touching the hub writes the hub\'s parts of that document only, not all of its parts', async () => {
    const c = connection()
    const partsOfHub = async () => (await c.run(
      `MATCH (p:${prefix}_KgEntityPart {ns: $ns, item: 'd:鉴权中间件'}) RETURN p.doc AS doc, elementId(p) AS element ORDER BY doc`, { ns: NS }, 'READ'
    )).records.map((r) => ({ doc: String(r.get('doc')), element: String(r.get('element')) }))
    try {
      const before = await partsOfHub()
      const write = new Map([['doc-3', { entities: [entity('鉴权中间件', '鉴权中间件', 'doc-3#9', 7)], relations: [] }]])
      await store.replaceDerived(NS, write)
      await reference.replaceDerived(NS, write)
      const after = await partsOfHub()
      // every other document's part node is the same node; doc-3's is a new one
      expect(after.map((p) => p.doc)).toEqual(before.map((p) => p.doc))
      for (const part of after) {
        const old = before.find((p) => p.doc === part.doc)!
        if (part.doc === 'doc-3') expect(part.element).not.toBe(old.element)
        else expect(part.element).toBe(old.element)
      }
      expect(await answers(store)).toEqual(await answers(reference))
    } finally {
      await c.close()
    }
  })
})
