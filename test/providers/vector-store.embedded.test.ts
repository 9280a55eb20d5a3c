import { spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'
import { describeVectorStoreContract } from '../contracts/vector-store.contract.js'

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-vectors-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describeVectorStoreContract('embedded', () => new EmbeddedVectorStore({ dir: tempDir() }))

/** Unit vector along axis `i` of `dims`. */
function axis(i: number, dims = 4): Float32Array {
  const v = new Float32Array(dims)
  v[i] = 1
  return v
}

function rec(id: string, vector: Float32Array, extra: Record<string, unknown> = {}): VectorRecord {
  return { id, vector, payload: { doc_id: id.split('#')[0]!, text: id, ...extra } }
}

async function ids(store: EmbeddedVectorStore, collection: string): Promise<string[]> {
  const out: string[] = []
  for await (const row of store.scroll(collection, 'default')) out.push(row.id)
  return out
}

describe('EmbeddedVectorStore persistence', () => {
  it('a reopened store sees the same records, payloads and scores', async () => {
    const dir = tempDir()
    const first = new EmbeddedVectorStore({ dir })
    await first.ensureCollection('docs', 4)
    await first.write('docs', 'default', { upsert: [rec('a#0', axis(0), { n: 1 }), rec('a#1', axis(1)), rec('b#0', axis(2))] })
    await first.write('docs', 'default', { deleteDocIds: ['a'], upsert: [rec('a#0', axis(3), { n: 2 })] })
    await first.ensureCollection('nodes', 2)
    await first.write('nodes', 'default', { upsert: [rec('N1', Float32Array.of(0.6, 0.8))] })
    await first.close()

    const second = new EmbeddedVectorStore({ dir })
    expect(await ids(second, 'docs')).toEqual(['a#0', 'b#0'])
    const hits = await second.search('docs', 'default', axis(3), 5)
    expect(hits[0]).toEqual({ id: 'a#0', score: 1, payload: { doc_id: 'a', text: 'a#0', n: 2 } })
    const [node] = await second.search('nodes', 'default', Float32Array.of(1, 0), 1)
    expect(node?.id).toBe('N1')
    expect(node?.score).toBeCloseTo(0.6, 6)
    // the dimension survives too
    await expect(second.ensureCollection('docs', 8)).rejects.toThrow(/4 dimensions/)
    await second.close()
  })

  it('a dropped collection stays dropped after reopen', async () => {
    const dir = tempDir()
    const first = new EmbeddedVectorStore({ dir })
    await first.ensureCollection('gone', 4)
    await first.write('gone', 'default', { upsert: [rec('g#0', axis(0))] })
    await first.dropCollection('gone')
    await first.close()
    const second = new EmbeddedVectorStore({ dir })
    expect(await second.count('gone', 'default')).toBe(0)
    expect(await second.search('gone', 'default', axis(0), 3)).toEqual([])
    await second.close()
  })

  it('a write with an invalid record is rejected whole and leaves nothing behind', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('keep#0', axis(0))] })
    await expect(
      store.write('docs', 'default', { deleteDocIds: ['keep'], upsert: [rec('new#0', axis(1)), rec('bad#0', new Float32Array(3))] })
    ).rejects.toThrow(/dimensions/)
    await expect(store.write('docs', 'default', { upsert: [rec('nan#0', Float32Array.of(1, Number.NaN, 0, 0))] })).rejects.toThrow()
    expect(await ids(store, 'docs')).toEqual(['keep#0'])
    await store.close()
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await ids(reopened, 'docs')).toEqual(['keep#0'])
    await reopened.close()
  })

  it('a torn last log record is ignored, and later writes still persist', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('one#0', axis(0))] })
    const logPath = join(dir, 'docs.log')
    const afterFirst = statSync(logPath).size
    await store.write('docs', 'default', { deleteDocIds: ['one'], upsert: [rec('two#0', axis(1)), rec('two#1', axis(2))] })
    const afterSecond = statSync(logPath).size
    await store.close()
    expect(afterSecond).toBeGreaterThan(afterFirst)

    // cut the second record in the middle, as a crash during its append would
    truncateSync(logPath, afterFirst + Math.floor((afterSecond - afterFirst) / 2))
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await ids(reopened, 'docs')).toEqual(['one#0'])
    // the torn bytes were cut off, so a new record follows a clean tail
    expect(statSync(logPath).size).toBe(afterFirst)
    await reopened.write('docs', 'default', { upsert: [rec('three#0', axis(3))] })
    await reopened.close()

    const again = new EmbeddedVectorStore({ dir })
    expect(await ids(again, 'docs')).toEqual(['one#0', 'three#0'])
    await again.close()
  })

  it('a last record with a bad checksum or a partial header is ignored', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('one#0', axis(0))] })
    const logPath = join(dir, 'docs.log')
    const afterFirst = statSync(logPath).size
    await store.write('docs', 'default', { upsert: [rec('two#0', axis(1))] })
    await store.close()

    // flip one byte in the second record's body: its length is intact but its CRC no longer matches
    const bytes = readFileSync(logPath)
    const flipAt = bytes.length - 5
    bytes[flipAt] = bytes[flipAt]! ^ 0xff
    writeFileSync(logPath, bytes)
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await ids(reopened, 'docs')).toEqual(['one#0'])
    await reopened.close()

    // three stray bytes, less than a record header, as a crash right after starting an append leaves
    appendFileSync(logPath, Buffer.from([1, 2, 3]))
    const third = new EmbeddedVectorStore({ dir })
    expect(await ids(third, 'docs')).toEqual(['one#0'])
    expect(statSync(logPath).size).toBe(afterFirst)
    await third.close()
  })

  it('compaction folds the log into the snapshot and keeps every record', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('docs', 4)
    const logPath = join(dir, 'docs.log')
    let appended = 0
    for (let i = 0; i < 40; i++) {
      const before = statSync(logPath).size
      await store.write('docs', 'default', { deleteDocIds: [`d${i - 5}`], upsert: [rec(`d${i}#0`, axis(i % 4), { i }), rec(`d${i}#1`, axis((i + 1) % 4))] })
      // a fold may run between two writes and cut the log: only a write's own growth counts
      appended += Math.max(0, statSync(logPath).size - before)
    }
    await store.close()
    // every write was appended, yet the log holds far less than their sum: it was folded into the snapshot
    expect(statSync(logPath).size).toBeLessThan(appended / 2)
    expect(statSync(join(dir, 'docs.snap')).size).toBeGreaterThan(0)

    const expected = Array.from({ length: 5 }, (_, k) => 35 + k)
      .flatMap((i) => [`d${i}#0`, `d${i}#1`])
      .sort()
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await ids(reopened, 'docs')).toEqual(expected)
    const hits = await reopened.search('docs', 'default', axis(3), 3)
    // i % 4 === 3 for #0 of d35 and d39; (i + 1) % 4 === 3 for #1 of d38
    expect(hits.map((h) => h.id)).toEqual(['d35#0', 'd38#1', 'd39#0'])
    await reopened.close()
  })

  it('a partition\'s stamp is the same after reopening, whether its writes are in the log or folded into the snapshot', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('a#0', axis(0)), rec('b#0', axis(1))] })
    await store.write('docs', 'tenant', { upsert: [rec('c#0', axis(2))] })
    const stamps = [await store.stamp('docs', 'default'), await store.stamp('docs', 'tenant')]
    // a partition's count is in its stamp; none for a namespace without a partition
    expect(stamps.map((s) => s?.split(':')[1])).toEqual(['2', '1'])
    expect(await store.stamp('docs', 'nobody')).toBeUndefined()
    await store.close()
    const reopened = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    expect([await reopened.stamp('docs', 'default'), await reopened.stamp('docs', 'tenant')]).toEqual(stamps)
    // written again as it is: a write (the stamp moves); then folded into the snapshot by that write's compaction
    await reopened.write('docs', 'default', { upsert: [rec('a#0', axis(0))] })
    const written = await reopened.stamp('docs', 'default')
    expect(written).not.toBe(stamps[0])
    await reopened.close()
    expect(statSync(join(dir, 'docs.log')).size).toBe(0)
    const third = new EmbeddedVectorStore({ dir })
    expect(await third.stamp('docs', 'default')).toBe(written)
    await third.close()
  })

  it('records already in the snapshot are not replayed again (crash between snapshot and log truncation)', async () => {
    const dir = tempDir()
    const logPath = join(dir, 'docs.log')
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 10_000_000 })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('a#0', axis(0)), rec('b#0', axis(1))] })
    await store.write('docs', 'default', { upsert: [rec('a#0', axis(2), { moved: true }), rec('c#0', axis(3))] })
    await store.write('docs', 'default', { deleteDocIds: ['b'] })
    await store.close()
    const staleLog = readFileSync(logPath)

    // compact (floor 0, one more write), then put the old log back as if truncation never happened
    const compacting = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await compacting.write('docs', 'default', { upsert: [rec('b#0', axis(0))] })
    await compacting.close()
    expect(statSync(logPath).size).toBe(0)
    writeFileSync(logPath, staleLog)

    const reopened = new EmbeddedVectorStore({ dir })
    // replaying the stale log over the snapshot would delete b#0 again
    expect(await ids(reopened, 'docs')).toEqual(['a#0', 'b#0', 'c#0'])
    const [hit] = await reopened.search('docs', 'default', axis(2), 1)
    expect(hit).toEqual({ id: 'a#0', score: 1, payload: { doc_id: 'a', text: 'a#0', moved: true } })
    await reopened.close()
  })

  it('search agrees with a brute-force cosine over random vectors, including the heap cut', async () => {
    const dims = 37 // not a multiple of the kernel's 8-float stride
    const store = new EmbeddedVectorStore({ dir: tempDir() })
    await store.ensureCollection('rand', dims)
    let seed = 12345
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31 - 0.5
    }
    const unit = (): Float32Array => {
      const v = Float32Array.from({ length: dims }, random)
      const n = Math.hypot(...v)
      return v.map((x) => x / n)
    }
    const records = Array.from({ length: 700 }, (_, i) => rec(`r#${i}`, unit()))
    await store.write('rand', 'default', { upsert: records })
    const q = unit()
    const brute = records
      .map((r) => ({ id: r.id, score: r.vector.reduce((sum, x, j) => sum + x * q[j]!, 0) }))
      .sort((x, y) => y.score - x.score)
      .slice(0, 25)
    const hits = await store.search('rand', 'default', q, 25)
    expect(hits.map((h) => h.id)).toEqual(brute.map((b) => b.id))
    hits.forEach((h, i) => expect(h.score).toBeCloseTo(brute[i]!.score, 5))

    // filtered: 5% of the rows (dot products row by row) and 60% of them (the whole matrix, rejected rows skipped)
    for (const keptOf20 of [1, 12]) {
      const kept = new Set(records.filter((_, i) => i % 20 < keptOf20).map((r) => r.payload.doc_id))
      const bruteKept = records
        .filter((r) => kept.has(r.payload.doc_id))
        .map((r) => ({ id: r.id, score: r.vector.reduce((sum, x, j) => sum + x * q[j]!, 0) }))
        .sort((x, y) => y.score - x.score)
        .slice(0, 25)
      const filtered = await store.search('rand', 'default', q, 25, { doc_ids: [...kept] })
      expect(filtered.map((h) => h.id)).toEqual(bruteKept.map((b) => b.id))
      filtered.forEach((h, i) => expect(h.score).toBeCloseTo(bruteKept[i]!.score, 5))
    }
    await store.close()
  })
})

describe('EmbeddedVectorStore shared rows', () => {
  // a namespace's collections hold each distinct vector once (row-pool.ts): records that share one must still answer
  // as if each held its own copy, through replaces, deletes, a dropped collection and a reopen
  it('records of several collections with the same vectors answer as a brute-force cosine over their own copies', async () => {
    const dims = 13
    const dir = tempDir()
    let store = new EmbeddedVectorStore({ dir })
    let seed = 777
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    const distinct = Array.from({ length: 40 }, () => {
      const v = Float32Array.from({ length: dims }, () => random() - 0.5)
      const n = Math.hypot(...v)
      return v.map((x) => x / n)
    })
    const collections = ['chunks', 'anchors', 'points']
    for (const c of collections) await store.ensureCollection(c, dims)
    // the model: what each collection holds, by id
    const held = new Map(collections.map((c) => [c, new Map<string, Float32Array>()]))
    for (let step = 0; step < 60; step++) {
      const c = collections[Math.floor(random() * 3)]!
      const upsert = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        rec(`d${Math.floor(random() * 12)}#${Math.floor(random() * 4)}`, distinct[Math.floor(random() * distinct.length)]!))
      const deleteDocIds = random() < 0.3 ? [`d${Math.floor(random() * 12)}`] : []
      await store.write(c, 'default', { deleteDocIds, upsert })
      const model = held.get(c)!
      for (const id of [...model.keys()]) if (deleteDocIds.includes(id.split('#')[0]!)) model.delete(id)
      for (const r of upsert) model.set(r.id, r.vector)
      if (step === 30) {
        await store.dropNamespace('anchors', 'default')
        held.get('anchors')!.clear()
      }
      if (step === 45) {
        await store.close()
        store = new EmbeddedVectorStore({ dir })
      }
    }
    const q = distinct[3]!
    for (const c of collections) {
      const model = held.get(c)!
      const brute = [...model].map(([id, v]) => ({ id, score: v.reduce((sum, x, j) => sum + x * q[j]!, 0) }))
        .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
      const hits = await store.search(c, 'default', q, 100)
      expect(hits.map((h) => h.id)).toEqual(brute.map((b) => b.id))
      hits.forEach((h, i) => expect(h.score).toBeCloseTo(brute[i]!.score, 5))
      const vectors = await store.vectorsOf(c, 'default', [...model.keys()])
      for (const [id, v] of model) [...vectors.get(id)!].forEach((x, j) => expect(x).toBeCloseTo(v[j]!, 6))
    }
    await store.close()
  })
})

describe('EmbeddedVectorStore partitions', () => {
  it('keeps default in the file names of a store without namespaces, every other namespace in a folder of its own', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.write('docs', 'default', { upsert: [rec('a#0', axis(0))] })
    await store.write('docs', 'tenant-a', { upsert: [rec('a#0', axis(1)), rec('b#0', axis(2))] })
    await store.close()
    expect(readdirSync(dir).sort()).toEqual(['docs.log', 'docs.snap', 'namespaces'])
    expect(readdirSync(join(dir, 'namespaces'))).toEqual(['tenant-a'])
    expect(readdirSync(join(dir, 'namespaces', 'tenant-a')).sort()).toEqual(['docs.log', 'docs.snap'])

    const reopened = new EmbeddedVectorStore({ dir })
    expect(await reopened.namespaces('docs')).toEqual(['default', 'tenant-a'])
    expect(await ids(reopened, 'docs')).toEqual(['a#0'])
    expect((await reopened.search('docs', 'tenant-a', axis(1), 5)).map((h) => [h.id, h.score])).toEqual([['a#0', 1], ['b#0', 0]])
    // dropping a namespace removes its folder; default's files stay, holding its records
    await reopened.dropNamespace('docs', 'tenant-a')
    expect(readdirSync(dir).sort()).toEqual(['docs.log', 'docs.snap', 'namespaces'])
    expect(readdirSync(join(dir, 'namespaces'))).toEqual([])
    // dropping default empties it; the collection (its dimension) remains
    await reopened.dropNamespace('docs', 'default')
    expect(await reopened.count('docs', 'default')).toBe(0)
    await expect(reopened.ensureCollection('docs', 8)).rejects.toThrow(/4 dimensions/)
    await reopened.close()
    const third = new EmbeddedVectorStore({ dir })
    expect(await third.namespaces('docs')).toEqual([])
    await third.write('docs', 'tenant-b', { upsert: [rec('c#0', axis(3))] })
    expect(await third.namespaces('docs')).toEqual(['tenant-b'])
    await third.close()
  })

  it('a read never makes a partition: no folder appears for a namespace only searched, counted or deleted from', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('docs', 4)
    await store.search('docs', 'ghost', axis(0), 3)
    await store.count('docs', 'ghost')
    await store.write('docs', 'ghost', { deleteDocIds: ['x'] })
    for await (const _ of store.scroll('docs', 'ghost')) { /* nothing */ }
    await store.close()
    expect(readdirSync(dir).sort()).toEqual(['docs.log', 'docs.snap'])
  })
})

describe('EmbeddedVectorStore edges', () => {
  it('concurrent writes to one collection are serialised and all persist', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('docs', 4)
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store.write('docs', 'default', { deleteDocIds: [`w${i}`], upsert: [rec(`w${i}#0`, axis(i % 4)), rec(`w${i}#1`, axis((i + 2) % 4))] })
      )
    )
    expect(await store.count('docs', 'default')).toBe(60)
    await store.close()
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await reopened.count('docs', 'default')).toBe(60)
    await reopened.close()
  })

  it('a payload whose id differs from the record id is rejected, as on Qdrant', async () => {
    const store = new EmbeddedVectorStore({ dir: tempDir() })
    await store.ensureCollection('docs', 4)
    await expect(store.write('docs', 'default', { upsert: [rec('a#0', axis(0), { id: 'other' })] })).rejects.toThrow(/reserved/)
    await store.write('docs', 'default', { upsert: [rec('a#1', axis(0), { id: 'a#1' })] })
    expect(await store.count('docs', 'default')).toBe(1)
    await store.close()
  })

  it('writing to a collection that was never ensured is rejected', async () => {
    const store = new EmbeddedVectorStore({ dir: tempDir() })
    await expect(store.write('nowhere', 'default', { upsert: [rec('a#0', axis(0))] })).rejects.toThrow(/ensureCollection/)
    await store.close()
  })

  it('a closed store refuses calls with BackendUnavailableError', async () => {
    const store = new EmbeddedVectorStore({ dir: tempDir() })
    await store.ensureCollection('docs', 4)
    await store.close()
    await expect(store.search('docs', 'default', axis(0), 1)).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(store.write('docs', 'default', { upsert: [rec('a#0', axis(0))] })).rejects.toBeInstanceOf(BackendUnavailableError)
    expect((await store.health()).ok).toBe(false)
  })

  it('health is not ok when the data folder cannot be used', async () => {
    const file = join(tempDir(), 'a-file')
    writeFileSync(file, 'not a folder')
    const store = new EmbeddedVectorStore({ dir: file })
    expect(await store.health()).toMatchObject({ backend: 'vector-store:memory', ok: false })
    await expect(store.ensureCollection('docs', 4)).rejects.toBeInstanceOf(BackendUnavailableError)
    await store.close()
  })

  it('collection names are file-safe: dots, slashes and non-Latin names stay inside the folder', async () => {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir })
    for (const name of ['..', '../escape', 'Episode_summary', '实体.name']) {
      await store.ensureCollection(name, 4)
      await store.write(name, 'default', { upsert: [rec(`${name}#0`, axis(1))] })
    }
    await store.close()
    expect(readdirSync(dir).filter((f) => f.endsWith('.snap')).sort()).toEqual(
      ['%2E%2E.snap', '%2E%2E%2Fescape.snap', 'Episode_summary.snap', '%E5%AE%9E%E4%BD%93%2Ename.snap'].sort()
    )
    const reopened = new EmbeddedVectorStore({ dir })
    for (const name of ['..', '../escape', 'Episode_summary', '实体.name']) {
      expect(await ids(reopened, name)).toEqual([`${name}#0`])
    }
    await reopened.close()
  })
})

describe('EmbeddedVectorStore crash safety', () => {
  const embeddedModule = fileURLToPath(new URL('../../src/providers/vector-store/embedded.ts', import.meta.url))
  const CHUNKS = 40
  const DIMS = 64

  /** A distinct vector for chunk j of doc i (weights 1, 0.25, 0.5 sum uniquely), so the parent can check what was written. */
  const vectorSource = `
    const vectorOf = (i, j) => {
      const v = new Float32Array(${DIMS})
      v[i % 64] += 1
      v[Math.floor(i / 64) % 64] += 0.25
      v[j] += 0.5
      return v
    }
  `

  /** Ingests doc `from`, `from + 1`, … one write each, printing `acked N` after each write resolves. */
  function startIngest(dir: string, from: number): ReturnType<typeof spawn> {
    const script = `
      import { EmbeddedVectorStore } from ${JSON.stringify(embeddedModule)}
      ${vectorSource}
      const store = new EmbeddedVectorStore({ dir: ${JSON.stringify(dir)}, compactionFloorBytes: 0 })
      await store.ensureCollection('docs', ${DIMS})
      for (let i = ${from}; ; i++) {
        const upsert = []
        for (let j = 0; j < ${CHUNKS}; j++) {
          upsert.push({ id: 'doc' + i + '#' + j, vector: vectorOf(i, j), payload: { doc_id: 'doc' + i, text: 'x'.repeat(500), j } })
        }
        await store.write('docs', 'default', { deleteDocIds: ['doc' + i], upsert })
        process.stdout.write('acked ' + i + '\\n')
      }
    `
    // run from the repository root so that `--import tsx` resolves the project's tsx
    return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      stdio: ['ignore', 'pipe', 'pipe']
    })
  }

  /** Kills the child with SIGKILL once `acks` writes have been acknowledged; resolves with the last acked doc. */
  function killAfter(child: ReturnType<typeof spawn>, acks: number): Promise<number> {
    return new Promise((resolvePromise, reject) => {
      let last = -1
      let seen = 0
      let buffered = ''
      let stderr = ''
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
      child.stdout!.on('data', (d: Buffer) => {
        buffered += d.toString()
        const lines = buffered.split('\n')
        buffered = lines.pop()!
        for (const line of lines) {
          last = Number(line.slice('acked '.length))
          seen++
        }
        if (seen >= acks && !child.killed) child.kill('SIGKILL')
      })
      child.on('exit', (_code, signal) => {
        if (signal === 'SIGKILL') resolvePromise(last)
        else reject(new Error(`ingest child exited without being killed: ${stderr}`))
      })
    })
  }

  it('SIGKILL in the middle of an ingest leaves every document wholly present or wholly absent', async () => {
    const dir = tempDir()
    let from = 0
    let lastAcked = -1
    for (const acks of [25, 13, 31]) {
      lastAcked = await killAfter(startIngest(dir, from), acks)
      expect(lastAcked).toBeGreaterThanOrEqual(from + acks - 1)

      const store = new EmbeddedVectorStore({ dir })
      const byDoc = new Map<string, number[]>()
      for await (const { payload } of store.scroll('docs', 'default')) {
        const list = byDoc.get(payload.doc_id) ?? []
        list.push((payload as VectorPayload & { j: number }).j)
        byDoc.set(payload.doc_id, list)
      }
      for (const [doc, chunks] of byDoc) {
        expect(chunks.sort((a, b) => a - b), doc).toEqual(Array.from({ length: CHUNKS }, (_, j) => j))
      }
      // every acknowledged write is durable; at most the one in flight is present beyond them
      for (let i = 0; i <= lastAcked; i++) expect(byDoc.has(`doc${i}`), `doc${i}`).toBe(true)
      expect(byDoc.size === lastAcked + 1 || byDoc.size === lastAcked + 2).toBe(true)
      // the stored vectors are the ones written: a chunk's own vector finds it first
      const vectorOf = new Function(`${vectorSource}; return vectorOf`)() as (i: number, j: number) => Float32Array
      const [hit] = await store.search('docs', 'default', vectorOf(lastAcked, 5), 1)
      expect(hit?.id).toBe(`doc${lastAcked}#5`)
      expect(hit?.score).toBeCloseTo(1, 6)
      await store.close()
      from = byDoc.size
    }
  }, 120_000)
})
