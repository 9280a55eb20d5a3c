/**
 * The main thread's CPU time of each step of the embedded vector store's compaction off its write queue, at N records
 * (stand-in unit vectors of 512 dimensions, ~700-byte payloads, one partition, int8 as the service's default): the copy
 * taken on the queue (`FrozenPartition.of`), each slice of the snapshot's encoding between two pauses
 * (`snapshotParts`, the writer's file writes left out; which slice took longest, counted from 0), and the re-pointing on the queue (`payloadsStoredAgain`). CPU
 * time (`process.threadCpuUsage`), so a loaded machine does not inflate it.
 *
 *   node --import tsx bench/vector-compaction-slices.ts [--records 200000]
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { openSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { FrozenPartition } from '../src/providers/vector-store/frozen.js'
import type { Collection } from '../src/providers/vector-store/matrix.js'
import { snapshotParts } from '../src/providers/vector-store/snapshot-codec.js'

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '200000' } } })
const records = Number(args.records)
const round = (x: number) => Math.round(x * 10) / 10
const cpuMs = () => {
  const u = process.threadCpuUsage()
  return (u.user + u.system) / 1000
}

const dir = await mkdtemp(join(tmpdir(), 'recall-vcompact-slices-'))
// no compaction while the records go in: the partition is held in memory, its payloads too
const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 2 ** 50 })
await store.ensureCollection('c', 512)
let seed = 1
const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32)
const TEXT = '检索服务把文档切成段落，每个段落带着它的上下文标题和元数据写入向量库。'.repeat(6)
for (let w = 0; w < records / 400; w++) {
  const upsert = Array.from({ length: 400 }, (_, i) => ({
    id: `doc-${w}-${i >> 3}#${i & 7}`, vector: Float32Array.from({ length: 512 }, () => next() - 0.5),
    payload: { doc_id: `doc-${w}-${i >> 3}`, text: `${TEXT} ${i}`, metadata: { chunk_index: i & 7 } }
  }))
  await store.write('c', 'default', { upsert })
}
// the partition itself, as the store holds it (a private member: this bench times the store's own steps)
const c = (await (store as unknown as { loaded(c: string, ns: string): Promise<Collection> }).loaded('c', 'default'))
const load = loadavg()[0]!

let t = cpuMs()
c.changedSinceFold = new Set()
const frozen = FrozenPartition.of(c, () => openSync(join(dir, 'c.snap'), 'r'))
const freezeMs = cpuMs() - t
const slices: number[] = []
const parts = snapshotParts(frozen)
const total = cpuMs()
t = cpuMs()
let part = parts.next()
for (; !part.done; part = parts.next()) {
  if (part.value !== null) {
    if (!(part.value instanceof Uint8Array)) part.value.now()
    continue
  }
  const now = cpuMs()
  slices.push(now - t)
  t = now
}
slices.push(cpuMs() - t)
const encodeMs = cpuMs() - total
frozen.release()
// the snapshot is not written here: the records are pointed at a stand-in file (nothing is read from it)
t = cpuMs()
c.payloadsStoredAgain(frozen.ids, { fd: openSync(join(dir, 'c.snap'), 'r'), at: 0, ends: part.value.ends })
const repointMs = cpuMs() - t
c.changedSinceFold = undefined
const longestAt = slices.indexOf(Math.max(...slices))
slices.sort((a, b) => b - a)
console.log(JSON.stringify({
  generated_by: 'bench/vector-compaction-slices.ts', at: new Date().toISOString(), records: c.size, load_average_1m: round(load),
  on_queue_cpu_ms: { copy: round(freezeMs), repoint: round(repointMs) },
  encode_cpu_ms: { total: round(encodeMs), slices: slices.length, longest: slices.slice(0, 5).map(round), longest_is_slice: longestAt, p50: round(slices[Math.floor(slices.length / 2)]!) },
  snapshot_bytes: part.value.length
}, null, 2))
await store.close()
await rm(dir, { recursive: true, force: true })
