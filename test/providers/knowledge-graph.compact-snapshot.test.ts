import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkHeader } from '../../src/providers/embedded/file-header.js'
import { parseSnapshotFile } from '../../src/providers/embedded/durable-log.js'
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'
import type { KnowledgeGraphStore } from '../../src/providers/knowledge-graph/port.js'

// A folder the store of 0bee96b wrote (format 1: a JSON snapshot and records after it), and what that store read from
// it: test/fixtures/kg-format-1/README.md says how both were made.
const FIXTURE = join(import.meta.dirname, '../fixtures/kg-format-1')
const DOCS = [...Array.from({ length: 24 }, (_, i) => `doc-${String(i).padStart(2, '0')}`), 'doc-30', 't-1', 't-2']

/** The reads the fixture's `reads.json` holds, made by the same calls. */
async function readsOf(store: KnowledgeGraphStore): Promise<Record<string, unknown>> {
  const reads: Record<string, unknown> = { namespaces: await store.namespaces() }
  for (const ns of ['default', 'tenant']) {
    const names = await store.names(ns)
    const ids = names.map((n) => n.id)
    reads[ns] = {
      count: await store.count(ns),
      names,
      entities: await store.getEntities(ns, ids),
      derivedOf: await store.derivedOf(ns, DOCS),
      neighbourhoods: await Promise.all(ids.map((id) => store.neighbourhood(ns, [id]))),
      cut: await store.neighbourhood(ns, ['d:网关'], undefined, { maxNeighbours: 5 }),
      keywords: await store.searchKeywords(ns, analyze('网关服务北京大学API'), 100),
      keywordsOfType: await store.searchKeywords(ns, analyze('网关服务北京'), 100, { types: ['组件', '城市'] })
    }
  }
  // as a JSON file holds them (no undefined fields)
  return JSON.parse(JSON.stringify(reads)) as Record<string, unknown>
}

/** Writes `pku` as it is until the log (about 200 bytes a record) outgrows the fixture's 14 kB snapshot, then closes (waiting for the fold). */
async function foldByUnchangedWrites(store: KnowledgeGraphStore): Promise<void> {
  const [pku] = await store.getEntities('default', ['pku'])
  for (let i = 0; i < 120; i++) await store.upsert('default', { entities: [pku!] })
  await store.close()
}

const SNAPSHOT_IDENTITY = { kind: 'knowledge-graph', format: 2, reads: [1] }

describe('the embedded knowledge graph\'s compact snapshot (format 2)', () => {
  it('opens the files the format-1 store wrote, answers what that store answered, and folds them into format 2 that reads the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-format-'))
    try {
      await cp(join(FIXTURE, 'files'), dir, { recursive: true })
      const expected = JSON.parse(await readFile(join(FIXTURE, 'reads.json'), 'utf8')) as Record<string, unknown>
      const snapshotFile = join(dir, 'knowledge-graph.snap')
      // the fixture is what it says: a format-1 snapshot holding JSON, with records after it
      const old = await readFile(snapshotFile)
      expect(old.readUInt32LE(8 + 'knowledge-graph'.length)).toBe(1)
      expect(parseSnapshotFile(old, snapshotFile, SNAPSHOT_IDENTITY, 'test').payload!.toString('utf8', 0, 1)).toBe('{')
      expect((await readFile(join(dir, 'knowledge-graph.log'))).length).toBeGreaterThan(500)

      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      expect(await readsOf(store)).toEqual(expected)
      // unchanged writes (an imported entity as it is) until the log outgrows the snapshot: the fold writes format 2
      await foldByUnchangedWrites(store)
      const folded = await readFile(snapshotFile)
      expect(folded.readUInt32LE(8 + 'knowledge-graph'.length)).toBe(2)
      expect([...parseSnapshotFile(folded, snapshotFile, SNAPSHOT_IDENTITY, 'test').payload!.subarray(0, 4)]).toEqual([0, 0x4b, 0x47, 0x32])
      // a build that reads format 1 alone refuses it, naming the version, rather than misreading it
      expect(() => checkHeader(folded, snapshotFile, 'snapshot', { kind: 'knowledge-graph', format: 1 }, 'test'))
        .toThrow(/knowledge-graph format version 2, this build reads version 1/)

      const reopened = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await readsOf(reopened)).toEqual(expected)
      await reopened.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('reads an item\'s parts written out of document order (as a build before it wrote them) in document order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-format-'))
    try {
      await cp(join(FIXTURE, 'files'), dir, { recursive: true })
      const expected = JSON.parse(await readFile(join(FIXTURE, 'reads.json'), 'utf8')) as Record<string, unknown>
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      await foldByUnchangedWrites(store)
      // every derived row's parts reversed, and the document table too (its indices with it), so that neither the
      // parts' order nor the table's is the documents' id order
      let outOfOrder = 0
      await editSnapshot(dir, (graph) => {
        const last = graph.docs.length - 1
        graph.docs.reverse()
        const reversed = (slots: unknown[], width: number) => {
          const parts = Array.from({ length: slots.length / width }, (_, p) => slots.slice(p * width, (p + 1) * width))
          for (const part of parts) part[0] = last - (part[0] as number)
          return parts.reverse().flat()
        }
        for (const [rows, at, width] of [[graph.entities, 3, 7], [graph.relations, 4, 4]] as const) {
          for (const row of rows) {
            if (!Array.isArray(row)) continue
            row[at] = reversed(row[at] as unknown[], width)
            if ((row[at] as unknown[]).length > width) outOfOrder++
          }
        }
      })
      expect(outOfOrder).toBeGreaterThan(0)
      const reopened = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await readsOf(reopened)).toEqual(expected)
      await reopened.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a compact snapshot whose table an item points past is refused as unreadable, not half loaded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-format-'))
    try {
      await cp(join(FIXTURE, 'files'), dir, { recursive: true })
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      await foldByUnchangedWrites(store)
      // the snapshot's document table cut to one entry: the checksums are made anew, so only the payload is wrong
      await editSnapshot(dir, (graph) => {
        graph.docs = graph.docs.slice(0, 1)
      })
      await expect(new EmbeddedKnowledgeGraphStore({ dir }).count('default')).rejects.toThrow(/knowledge graph of namespace default is unreadable: .*no string 1 in the snapshot's table/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

type SnapshotRow = unknown[] | Record<string, unknown>

/** Rewrites the compact snapshot in `dir` with its graph as `edit` leaves it, the checksums made anew. */
async function editSnapshot(dir: string, edit: (graph: { docs: string[]; entities: SnapshotRow[]; relations: SnapshotRow[] }) => void): Promise<void> {
  const { encodeSnapshotFile } = await import('../../src/providers/embedded/durable-log.js')
  const { writeFile } = await import('node:fs/promises')
  const snapshotFile = join(dir, 'knowledge-graph.snap')
  const parsed = parseSnapshotFile(await readFile(snapshotFile), snapshotFile, SNAPSHOT_IDENTITY, 'test')
  const payload = parsed.payload!
  const graph = JSON.parse(payload.toString('utf8', 4)) as { docs: string[]; entities: SnapshotRow[]; relations: SnapshotRow[] }
  edit(graph)
  await writeFile(snapshotFile, encodeSnapshotFile(parsed.seq, Buffer.concat([payload.subarray(0, 4), Buffer.from(JSON.stringify(graph))]), SNAPSHOT_IDENTITY))
}
