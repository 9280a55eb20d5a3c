import { closeSync, cpSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'

/**
 * The compaction's snapshot writer, the real one, behind two gates the test opens: before it writes (the log is set
 * aside and the partition copied) and after it has written and synced the file (not yet renamed into place). The files
 * are real; only the moment the compaction goes on is the test's.
 */
const gates = vi.hoisted(() => {
  const gate = () => {
    let open!: () => void
    let reached!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    const arrived = new Promise<void>((resolve) => (reached = resolve))
    return { open, opened, reached, arrived }
  }
  return { make: () => ({ start: gate(), written: gate() }), current: undefined as undefined | { start: ReturnType<typeof gate>; written: ReturnType<typeof gate> } }
})
vi.mock('../../src/providers/vector-store/snapshot-writer.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/providers/vector-store/snapshot-writer.js')>()
  return {
    writeSnapshotFile: async (...args: Parameters<typeof real.writeSnapshotFile>) => {
      const held = gates.current
      held?.start.reached()
      await held?.start.opened
      const layout = await real.writeSnapshotFile(...args)
      held?.written.reached()
      await held?.written.opened
      return layout
    }
  }
})

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-vcompact-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const DIMS = 4
const axis = (i: number): Float32Array => Float32Array.from({ length: DIMS }, (_, d) => (d === i % DIMS ? 1 : 0))
const rec = (id: string, i: number, text: string): VectorRecord => ({ id, vector: axis(i), payload: { doc_id: id.split('#')[0]!, text } })
const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

async function scrolled(store: EmbeddedVectorStore): Promise<{ id: string; payload: VectorPayload }[]> {
  const out: { id: string; payload: VectorPayload }[] = []
  for await (const row of store.scroll('c', 'default')) out.push(row)
  return out
}

/** Resolves with `promise`, or rejects once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))])
}

async function until(done: () => boolean, what: string): Promise<void> {
  for (let n = 0; n < 1000 && !done(); n++) await new Promise((wait) => setTimeout(wait, 10))
  if (!done()) throw new Error(`${what}: never`)
}

// The writes, and what the partition holds after each, worked out here from the writes themselves
const FIRST: VectorRecord[] = [rec('a#0', 0, `old a ${'甲'.repeat(40)}`), rec('b#0', 1, `b ${'乙'.repeat(40)}`), rec('c#0', 2, `c ${'丙'.repeat(40)}`)]
const SECOND = { deleteDocIds: ['c'], upsert: [rec('a#0', 3, `new a ${'丁'.repeat(40)}`), rec('d#0', 2, `d ${'戊'.repeat(40)}`)] }
const rowsOf = (records: VectorRecord[]) => records.map(({ id, payload }) => ({ id, payload })).sort(byId)
const AFTER_FIRST = rowsOf(FIRST)
const AFTER_SECOND = rowsOf([FIRST[1]!, ...SECOND.upsert])

describe('EmbeddedVectorStore compaction off the write queue', () => {
  it('a write during a compaction is answered before it ends, keeps its own payload after it, and every other record reads the new snapshot', async () => {
    gates.current = gates.make()
    const held = gates.current
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('c', DIMS)
    // the first write outgrows the empty snapshot: its compaction sets the log aside and stops at the gate
    await store.write('c', 'default', { upsert: FIRST })
    await within(held.start.arrived, 10_000, 'the compaction to begin')
    expect(existsSync(join(dir, 'c.fold.log'))).toBe(true)
    // the compaction is held: a write that waited for it would never be answered
    await within(store.write('c', 'default', SECOND), 5_000, 'a write during the compaction')
    expect(await scrolled(store)).toEqual(AFTER_SECOND)
    held.start.open()
    await within(held.written.arrived, 10_000, 'the snapshot to be written')
    held.written.open()
    await until(() => !existsSync(join(dir, 'c.fold.log')), 'the compaction to end')

    // a#0 was written again during the compaction: the new snapshot holds its old payload, the partition its new one
    expect(readFileSync(join(dir, 'c.snap')).includes(Buffer.from('old a'))).toBe(true)
    const [a] = await store.search('c', 'default', axis(3), 1)
    expect(a).toEqual({ id: 'a#0', score: 1, payload: SECOND.upsert[0]!.payload })
    expect(await scrolled(store)).toEqual(AFTER_SECOND)
    // b#0 was not: it is read from the new snapshot now (its text changed there in place is what a hit answers)
    const snap = readFileSync(join(dir, 'c.snap'))
    const at = snap.indexOf(Buffer.from('"b 乙'))
    expect(at).toBeGreaterThan(0)
    const overwrite = (bytes: string): void => {
      const fd = openSync(join(dir, 'c.snap'), 'r+')
      writeSync(fd, Buffer.from(bytes), 0, Buffer.byteLength(bytes), at)
      closeSync(fd)
    }
    overwrite('"B 乙')
    const [b] = await store.search('c', 'default', axis(1), 1)
    expect(b!.payload.text).toBe(`B ${'乙'.repeat(40)}`)
    // put back, or the snapshot's checksum refuses it at the next open
    overwrite('"b 乙')
    await store.close()
    gates.current = undefined

    const reopened = new EmbeddedVectorStore({ dir })
    expect(await scrolled(reopened)).toEqual(AFTER_SECOND)
    await reopened.close()
  })

  it('a crash at each step of a compaction leaves the state before it plus every acknowledged write', async () => {
    gates.current = gates.make()
    const held = gates.current
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('c', DIMS)
    const empty = readFileSync(join(dir, 'c.snap'))
    await store.write('c', 'default', { upsert: FIRST })
    await within(held.start.arrived, 10_000, 'the compaction to begin')
    await store.write('c', 'default', SECOND)
    const crashes = new Map<string, { dir: string; expected: typeof AFTER_FIRST }>()
    const keep = (name: string, expected: typeof AFTER_FIRST): string => {
      const copy = tempDir()
      cpSync(dir, copy, { recursive: true })
      crashes.set(name, { dir: copy, expected })
      return copy
    }
    // the log set aside (the first write's), the second write in the new log, the old (empty) snapshot in place
    const setAside = keep('log set aside', AFTER_SECOND)
    held.start.open()
    await within(held.written.arrived, 10_000, 'the snapshot to be written')
    expect(existsSync(join(keep('snapshot written, not renamed', AFTER_SECOND), 'c.snap.fold.tmp'))).toBe(true)
    // the same, the snapshot torn part-way
    const torn = keep('snapshot half written', AFTER_SECOND)
    const temp = readFileSync(join(torn, 'c.snap.fold.tmp'))
    writeFileSync(join(torn, 'c.snap.fold.tmp'), temp.subarray(0, temp.length >> 1))
    held.written.open()
    await until(() => !existsSync(join(dir, 'c.fold.log')), 'the compaction to end')
    await store.close()
    gates.current = undefined
    // the new snapshot in place, the set-aside log not removed yet
    const renamed = keep('snapshot renamed, set-aside log left', AFTER_SECOND)
    cpSync(join(setAside, 'c.fold.log'), join(renamed, 'c.fold.log'))
    keep('done', AFTER_SECOND)
    // the log linked aside, the empty one not renamed over it yet: both names hold the first write, the second was never written
    const linked = keep('log linked aside, not replaced', AFTER_FIRST)
    writeFileSync(join(linked, 'c.snap'), empty)
    cpSync(join(setAside, 'c.fold.log'), join(linked, 'c.fold.log'))
    cpSync(join(setAside, 'c.fold.log'), join(linked, 'c.log'))

    expect(readdirSync(setAside).sort()).toEqual(['c.fold.log', 'c.log', 'c.snap'])
    for (const [name, { dir: crashed, expected }] of crashes) {
      const opened = new EmbeddedVectorStore({ dir: crashed })
      expect(await scrolled(opened), name).toEqual(expected)
      // what a fold left is folded or removed at open: a snapshot and a log remain
      expect(readdirSync(crashed).sort(), name).toEqual(['c.log', 'c.snap'])
      await opened.write('c', 'default', { upsert: [rec('e#0', 0, 'e')] })
      await opened.close()
      const again = new EmbeddedVectorStore({ dir: crashed })
      expect(await scrolled(again), name).toEqual([...expected, { id: 'e#0', payload: { doc_id: 'e', text: 'e' } }].sort(byId))
      await again.close()
    }
  })
})
