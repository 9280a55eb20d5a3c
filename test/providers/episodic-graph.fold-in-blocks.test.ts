/**
 * The episodic graph's fold a block at a time (`streaming-fold.ts`) against the whole fold (`foldEpisodicGraph`, which
 * rebuilds the namespace in memory): the same snapshot bytes for the same files, built by the store's own writes
 * (Episodes written, rewritten and deleted, entities shared by several and left behind, edges across Episodes, loose
 * node ids, packed evidence), read in blocks of a few bytes so that rows and strings cross block ends; a damaged
 * snapshot refused; the store's fold thread under its heap limit.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DurableLog, encodeSnapshotFile } from '../../src/providers/embedded/durable-log.js'
import { readSnapshotHead, SnapshotFileWriter } from '../../src/providers/embedded/snapshot-stream.js'
import { EmbeddedEpisodicGraphStore, foldEpisodicGraph } from '../../src/providers/episodic-graph/embedded.js'
import type { EpisodeGraph, EpisodicGraphChange, EpisodicNode } from '../../src/providers/episodic-graph/port.js'
import { foldEpisodicGraphInBlocks } from '../../src/providers/episodic-graph/streaming-fold.js'
import { seededRandom } from '../../src/evaluation/statistics.js'

const IDENTITY = { kind: 'episodic-graph', format: 1 }
const BACKEND = 'episodic-graph:test'
const NAME = 'graph'
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-ep-blocks-'))
  dirs.push(dir)
  return dir
}

const pick = <T>(xs: readonly T[], next: () => number) => xs[Math.floor(next() * xs.length)]!

/** Episode ids `ep-0` …: enough that a fold's log leaves most of them untouched, with edges to the entities it may remove. */
const EPISODES = 15
const ENTITY_IDS = ['n:网关', 'n:服务', 'n:北京', 'n:API', 'n:"引号\\', 'n:😀']
const entity = (id: string, next: () => number): EpisodicNode =>
  ({ id, type: 'Entity', name: `${id.slice(2)}${next() < 0.3 ? '·别名' : ''}`, ...(next() < 0.3 ? { description: `关于${id}` } : {}) })

/** An Episode `ep-<k>` with facets and points, edges to entities among `entities` and, now and then, to another Episode's node. */
function episode(k: number, entities: readonly string[], next: () => number, round: number): EpisodeGraph {
  const id = `ep-${k}`
  const nodes: EpisodicNode[] = []
  const edges: EpisodeGraph['edges'] = []
  const facets = Math.floor(next() * 3)
  for (let f = 0; f < facets; f++) {
    const facet = `${id}/f${f}`
    const text = pick(['时间线', '原因', 'API 设计'], next)
    nodes.push({ id: facet, type: 'Facet', name: text, search_text: text })
    edges.push({ from: id, to: facet, relationship_name: 'has_facet', edge_text: next() < 0.5 ? text : null })
    if (next() < 0.6) {
      const point = `${id}/f${f}/p0`
      nodes.push({ id: point, type: 'FacetPoint', name: `要点${round}`, evidence: JSON.stringify({ chunks: [`doc#${k}`], 标题: '第一节' }) })
      edges.push({ from: facet, to: point, relationship_name: 'has_point', edge_text: '要点', ...(next() < 0.3 ? { description: '说明' } : {}) })
    }
  }
  if (next() < 0.2) {
    // a node whose id is not under its Episode's
    const loose = `loose-${k}`
    nodes.push({ id: loose, type: 'Facet', name: '松散', search_text: '松散' })
    edges.push({ from: id, to: loose, relationship_name: 'has_facet' })
  }
  for (const end of entities) if (next() < 0.7) edges.push({ from: id, to: end, relationship_name: 'involves_entity', edge_text: end.slice(2) })
  if (next() < 0.2) edges.push({ from: id, to: `ep-${(k + 1) % EPISODES}`, relationship_name: 'involves_entity' })
  const summary = next() < 0.5 ? { summary: `第${round}轮` } : {}
  return {
    episode: { id, type: 'Episode', name: `片段${k}`, ...summary, mentioned_time_start_ms: next() < 0.5 ? round * 1000 : null },
    nodes, edges
  }
}

/** Writes through the store: Episodes written and rewritten (some twice in one change), deleted, entities written or not. */
async function writeSome(store: EmbeddedEpisodicGraphStore, next: () => number, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const written = ENTITY_IDS.filter(() => next() < 0.35)
    // ends among the entities written now and, at times, ones written earlier (refused when they are gone)
    const ends = [...written, ...ENTITY_IDS.filter((id) => !written.includes(id) && next() < 0.15)]
    const episodes = Array.from({ length: Math.floor(next() * 3) }, () => episode(Math.floor(next() * EPISODES), ends, next, round))
    // now and then one Episode twice in a change: the last is kept, in the first's place
    if (episodes.length > 0 && next() < 0.1) episodes.push(episode(Number(episodes[0]!.episode.id.slice(3)), ends, next, round))
    const change: EpisodicGraphChange = {
      ...(written.length > 0 ? { entities: written.map((id) => entity(id, next)) } : {}),
      ...(episodes.length > 0 ? { episodes } : {}),
      ...(next() < 0.3 ? { deleteEpisodeIds: [`ep-${Math.floor(next() * (EPISODES + 1))}`] } : {})
    }
    await store.apply('default', change).catch((error: unknown) => {
      if (!/unknown node/.test(String(error))) throw error
    })
  }
}

/** Folds the log of `dir` into its snapshot with the whole fold, in process. */
async function foldWhole(dir: string): Promise<void> {
  const { log, snapshot, records } = await DurableLog.open({ backend: BACKEND, ...IDENTITY, dir, name: NAME })
  if (records.length > 0) await log.compact(foldEpisodicGraph(snapshot, records))
  await log.close()
}

/** Both folds of the files in `dir` (snapshot and log), as the bytes of the snapshot file each writes, and the entities the log wrote. */
async function bothFolds(dir: string, blockBytes: number): Promise<{ whole: Buffer; blocks: Buffer; logEntities: Set<string> }> {
  const { log, snapshot, records } = await DurableLog.open({ backend: BACKEND, ...IDENTITY, dir, name: NAME })
  await log.close()
  const head = readSnapshotHead(join(dir, `${NAME}.snap`), IDENTITY, BACKEND)
  const seq = head.seq + records.length
  const whole = encodeSnapshotFile(seq, foldEpisodicGraph(snapshot, records), IDENTITY)
  const out = new SnapshotFileWriter(join(dir, 'blocks.snap'), seq, IDENTITY)
  foldEpisodicGraphInBlocks(head.payloadBytes > 0 ? head : undefined, records, out, BACKEND, { blockBytes, inBlocks: 'always' })
  out.finish()
  const logEntities = new Set(records.flatMap((r) => ((JSON.parse(r.toString('utf8')) as EpisodicGraphChange).entities ?? []).map((e) => e.id)))
  return { whole, blocks: await readFile(join(dir, 'blocks.snap')), logEntities }
}

describe('the episodic graph folded a block at a time', () => {
  it('writes the bytes of the whole fold for snapshots and logs the store wrote, over several folds', async () => {
    let entitiesGone = 0
    for (const seed of [1, 2, 3, 4]) {
      const dir = await tempDir()
      const next = seededRandom(seed)
      for (let fold = 0; fold < 6; fold++) {
        const store = new EmbeddedEpisodicGraphStore({ file: join(dir, `${NAME}.json`), compactionFloorBytes: 1e12 })
        await writeSome(store, next, fold === 0 ? 40 : 6)
        await store.close()
        const { whole, blocks, logEntities } = await bothFolds(dir, 5 + fold * 11)
        expect(blocks.length).toBeGreaterThan(200)
        expect(blocks.toString('utf8')).toBe(whole.toString('utf8'))
        const held = (JSON.parse(whole.subarray(whole.indexOf('{"version"')).toString('utf8')) as { entities: EpisodicNode[] }).entities.map((e) => e.id)
        entitiesGone += [...logEntities].filter((id) => !held.includes(id)).length
        await foldWhole(dir)
      }
    }
    // entities the logs wrote and then removed (no Episode left with an edge to them): what the fold plays by item
    expect(entitiesGone).toBeGreaterThan(0)
  })

  it('refuses a snapshot whose bytes changed after its checksum, writing nothing from it', async () => {
    const dir = await tempDir()
    const store = new EmbeddedEpisodicGraphStore({ file: join(dir, `${NAME}.json`), compactionFloorBytes: 1e12 })
    await writeSome(store, seededRandom(9), 20)
    await store.close()
    await foldWhole(dir)
    const more = new EmbeddedEpisodicGraphStore({ file: join(dir, `${NAME}.json`), compactionFloorBytes: 1e12 })
    await writeSome(more, seededRandom(10), 3)
    await more.close()
    const snapshotFile = join(dir, `${NAME}.snap`)
    const bytes = await readFile(snapshotFile)
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 1
    await writeFile(snapshotFile, bytes)
    await expect(bothFolds(dir, 64)).rejects.toThrow(/checksum/)
  })

  it('is the store\'s fold: a store that folds small logs as it goes reads back what one that never folds holds', async () => {
    const folding = await tempDir()
    const never = await tempDir()
    /** About 60 kB of Episodes first (folded whole: the snapshot was empty), then rounds of writes of a few kB each. */
    const write = async (dir: string, options: { compactionFloorBytes: number; foldLogBytes?: number }) => {
      const next = seededRandom(21)
      for (let round = 0; round < 6; round++) {
        // a store per round: its close waits for the fold its writes began, and the next round's first write begins another
        const store = new EmbeddedEpisodicGraphStore({ file: join(dir, `${NAME}.json`), ...options })
        if (round === 0) {
          await store.apply('default', { episodes: Array.from({ length: 60 }, (_, i) => ({ episode: { id: `big-${i}`, type: 'Episode', name: '大', summary: '长'.repeat(300) }, nodes: [], edges: [] })) })
        } else await writeSome(store, next, 10)
        await store.close()
      }
    }
    // (with Episodes written twice in one change: before the last version alone was kept, the earlier one's edges stayed
    // in memory until the namespace was next read from a snapshot, so the two stores answered differently)
    // folds once the log holds 3 kB: under the snapshot after the first round, so those folds read it in blocks
    await write(folding, { compactionFloorBytes: 0, foldLogBytes: 3000 })
    await write(never, { compactionFloorBytes: 1e12 })
    const read = async (dir: string) => {
      const store = new EmbeddedEpisodicGraphStore({ file: join(dir, `${NAME}.json`) })
      const ids = [...ENTITY_IDS, ...Array.from({ length: EPISODES + 1 }, (_, k) => `ep-${k}`), 'big-0']
      const fragment = await store.describe('default', ids)
      const out = { types: await store.countByType('default'), nodes: [...fragment.nodes].sort(), edges: fragment.edges }
      await store.close()
      return out
    }
    const head = readSnapshotHead(join(folding, `${NAME}.snap`), IDENTITY, BACKEND)
    expect(head.seq).toBeGreaterThan(3)
    expect(head.payloadBytes).toBeGreaterThan(50_000)
    expect(await read(folding)).toEqual(await read(never))
  }, 180_000)
})
