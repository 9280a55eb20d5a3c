import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { MemoryBudget, MemoryBudgetError, type MemoryProbe } from '../../src/memory/budget.js'
import { formatBytes, HEAP_GROWING_PERCENT, heapFlagsFor, heapMegabytesFor, parseMemoryLimit } from '../../src/memory/limit.js'

const MiB = 2 ** 20
const GiB = 2 ** 30

describe('MEMORY_LIMIT', () => {
  it.each([
    ['805306368', 805306368],
    ['512MiB', 512 * MiB],
    ['6GiB', 6 * GiB],
    ['6gib', 6 * GiB],
    ['6g', 6 * GiB],
    ['1.5GB', 1.5e9],
    ['2048k', 2048 * 1024],
    [' 1 TiB ', 2 ** 40],
    ['100b', 100]
  ])('reads %j as %d bytes', (text, bytes) => {
    expect(parseMemoryLimit(text)).toBe(bytes)
    expect(loadConfig({ MEMORY_LIMIT: text }).memory).toEqual({ bytes, source: 'MEMORY_LIMIT', releaseAfterMs: 10_000, releaseMinGainBytes: 64 * 2 ** 20, releaseIntervalMs: 300_000, releaseMaxHeapBytes: 512 * 2 ** 20 })
  })

  it.each(['', 'lots', '6 GiBs', '-1GiB', '0', '0.0001b', '6PiB2'])('refuses %j', (text) => {
    expect(parseMemoryLimit(text)).toBeUndefined()
    if (text !== '') expect(() => loadConfig({ MEMORY_LIMIT: text })).toThrow(ConfigError)
  })

  it('names the variable and the value it refused', () => {
    expect(() => loadConfig({ MEMORY_LIMIT: 'lots' })).toThrow(/MEMORY_LIMIT="lots": must match/)
    expect(() => loadConfig({ MEMORY_LIMIT: '0' })).toThrow(/MEMORY_LIMIT="0": must be more than 0 bytes/)
  })

  it('MEMORY_RELEASE_AFTER_MS: 10 s unless set, 0 turns it off, a bad value is named', () => {
    expect(loadConfig({}).memory.releaseAfterMs).toBe(10_000)
    expect(loadConfig({ MEMORY_RELEASE_AFTER_MS: '0' }).memory.releaseAfterMs).toBe(0)
    expect(() => loadConfig({ MEMORY_RELEASE_AFTER_MS: '-5' })).toThrow(/MEMORY_RELEASE_AFTER_MS="?-5"?/)
    expect(() => loadConfig({ MEMORY_RELEASE_AFTER_MS: 'soon' })).toThrow(/MEMORY_RELEASE_AFTER_MS="soon": must be an integer/)
  })

  it('MEMORY_RELEASE_MIN_GAIN and MEMORY_RELEASE_INTERVAL_MS: 64 MiB and 5 min unless set, in bytes with a unit and ms, a bad value named', () => {
    expect(loadConfig({ MEMORY_RELEASE_MIN_GAIN: '256MiB', MEMORY_RELEASE_INTERVAL_MS: '0' }).memory).toMatchObject({ releaseMinGainBytes: 256 * 2 ** 20, releaseIntervalMs: 0 })
    expect(loadConfig({ MEMORY_RELEASE_MIN_GAIN: '1.5GB' }).memory.releaseMinGainBytes).toBe(1.5e9)
    expect(() => loadConfig({ MEMORY_RELEASE_MIN_GAIN: 'lots' })).toThrow(/MEMORY_RELEASE_MIN_GAIN="lots": must match/)
    expect(() => loadConfig({ MEMORY_RELEASE_MIN_GAIN: '0' })).toThrow(/MEMORY_RELEASE_MIN_GAIN="0": must be more than 0 bytes/)
    expect(() => loadConfig({ MEMORY_RELEASE_INTERVAL_MS: 'soon' })).toThrow(/MEMORY_RELEASE_INTERVAL_MS="soon": must be an integer/)
  })

  it('MEMORY_RELEASE_MAX_HEAP: 512 MiB unless set, in bytes with a unit, a bad value named', () => {
    expect(loadConfig({ MEMORY_RELEASE_MAX_HEAP: '8GiB' }).memory.releaseMaxHeapBytes).toBe(8 * 2 ** 30)
    expect(loadConfig({ MEMORY_RELEASE_MAX_HEAP: '300000000' }).memory.releaseMaxHeapBytes).toBe(300_000_000)
    expect(() => loadConfig({ MEMORY_RELEASE_MAX_HEAP: 'all' })).toThrow(/MEMORY_RELEASE_MAX_HEAP="all": must match/)
    expect(() => loadConfig({ MEMORY_RELEASE_MAX_HEAP: '0MiB' })).toThrow(/MEMORY_RELEASE_MAX_HEAP="0MiB": must be more than 0 bytes/)
  })

  it('unset, comes from the machine (or its cgroup) and is a positive number of bytes', () => {
    const { memory } = loadConfig({})
    expect(['cgroup', 'machine']).toContain(memory.source)
    expect(memory.bytes).toBeGreaterThan(0)
  })

  it('gives V8 three quarters of it, never under 256 MiB', () => {
    expect(heapMegabytesFor(8 * GiB)).toBe(6 * 1024)
    expect(heapMegabytesFor(100 * MiB)).toBe(256)
  })

  it('fixes V8\'s heap growing factor and counts memory outside the heap in its limit, beside the heap limit', () => {
    expect(HEAP_GROWING_PERCENT).toBe(50)
    expect(heapFlagsFor(8 * GiB)).toEqual(['--max-old-space-size=6144', '--heap-growing-percent=50', '--external-memory-accounted-in-global-limit'])
  })

  it('start.sh\'s flags are options this node takes: a node that dropped one would not start the service', () => {
    const limit = execFileSync(process.execPath, [...heapFlagsFor(2 * GiB), '-p', 'require("node:v8").getHeapStatistics().heap_size_limit'], { encoding: 'utf8' })
    // old space 1536 MiB, plus the young generation V8 adds for that size
    expect(Number(limit) / MiB).toBeGreaterThanOrEqual(1536)
    expect(Number(limit) / MiB).toBeLessThan(1536 + 256)
  })

  it('heap-flag prints both flags, and leaves out a heap limit the operator set in NODE_OPTIONS (node refuses the other there)', () => {
    const flags = (nodeOptions: string) => execFileSync(process.execPath, ['--import', 'tsx', 'src/memory/heap-flag.ts'], {
      encoding: 'utf8', env: { ...process.env, MEMORY_LIMIT: '8GiB', NODE_OPTIONS: nodeOptions }
    }).trim()
    expect(flags('')).toBe('--max-old-space-size=6144 --heap-growing-percent=50 --external-memory-accounted-in-global-limit')
    expect(flags('--max-old-space-size=1000')).toBe('--heap-growing-percent=50 --external-memory-accounted-in-global-limit')
  })

  it('start.sh gives glibc two arenas and a fixed 128 KiB mmap threshold, keeping values the operator set', () => {
    // a node of our own on PATH that prints what start.sh ran it with
    const bin = mkdtempSync(join(tmpdir(), 'recall-start-'))
    writeFileSync(join(bin, 'node'), '#!/bin/sh\nif [ "$1" = dist/src/memory/heap-flag.js ]; then echo --heap-flags; exit 0; fi\necho "$MALLOC_ARENA_MAX $MALLOC_MMAP_THRESHOLD_ $*"\n', { mode: 0o755 })
    const started = (env: Record<string, string>) => {
      const { MALLOC_ARENA_MAX: _a, MALLOC_MMAP_THRESHOLD_: _m, ...rest } = process.env
      return execFileSync('sh', ['scripts/start.sh'], { encoding: 'utf8', env: { ...rest, ...env, PATH: `${bin}:${process.env['PATH']}` } }).trim()
    }
    try {
      expect(started({})).toBe('2 131072 --heap-flags dist/src/http/server.js')
      expect(started({ MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '1048576' })).toBe('8 1048576 --heap-flags dist/src/http/server.js')
    } finally {
      rmSync(bin, { recursive: true, force: true })
    }
  })

  it('formats bytes in binary units', () => {
    expect(formatBytes(6 * GiB)).toBe('6.00 GiB')
    expect(formatBytes(512 * MiB)).toBe('512.0 MiB')
  })
})

describe('MemoryBudget', () => {
  const probe = (rss: number, heapUsed: number, heapLimit = 4 * GiB): MemoryProbe => ({ rss: () => rss, heapUsed: () => heapUsed, heapLimit: () => heapLimit })
  const sizes = async () => [
    { namespace: 'small', documents: 1, chunks: 2, entities: 3, relations: 4, episodes: 1, images: 0 },
    { namespace: 'big', documents: 10, chunks: 200, entities: 30, relations: 40, episodes: 10, images: 0 }
  ]

  it('takes writes below 90% of the limit resident and 85% of the heap limit', async () => {
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, probe(899 * MiB, 0.84 * 4 * GiB))
    await expect(budget.assertRoom(sizes)).resolves.toBeUndefined()
    expect(budget.usage()).toMatchObject({ refusing_writes: false, refused_writes: 0, rss_refuse_at_bytes: 900 * MiB })
  })

  it('refuses at 90% resident, naming the limit, the largest namespace first, and what to do', async () => {
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, probe(900 * MiB, 10 * MiB))
    const refusal = await budget.assertRoom(sizes).catch((e: unknown) => e)
    expect(refusal).toBeInstanceOf(MemoryBudgetError)
    const { message, statusCode, code } = refusal as MemoryBudgetError
    expect({ statusCode, code }).toEqual({ statusCode: 507, code: 'RECALL_MEMORY_BUDGET' })
    expect(message).toContain('900.0 MiB resident of MEMORY_LIMIT 1000.0 MiB (writes stop at 90%, 900.0 MiB)')
    expect(message).toContain('Namespaces: big: 10 documents, 200 chunks, 30 entities, 40 relations, 10 Episodes; small: 1 documents')
    expect(budget.usage()).toMatchObject({ refusing_writes: true, refused_writes: 1 })
  })

  it('before it refuses at 90% resident, runs a heap release predicted to make the room, and takes the write when it did', async () => {
    // 950 MiB resident, 100 of it V8's page pool: the release gives it back, 850 is under the 900 mark
    const held = { rss: 950 * MiB, pool: 100 * MiB }
    const collections: number[] = []
    const hooks = {
      collect: () => async () => {
        collections.push(held.pool)
        held.rss -= held.pool
        held.pool = 0
      },
      read: async () => ({ rss: held.rss, v8Pages: 200 * MiB + held.pool, pagedCommitted: 200 * MiB, pagedUnused: 0, heapUsed: 10 * MiB })
    }
    const live: MemoryProbe = { rss: () => held.rss, heapUsed: () => 10 * MiB, heapLimit: () => 4 * GiB }
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT', releaseAfterMs: 10_000, releaseIntervalMs: 300_000 }, live, hooks)
    await expect(budget.assertRoom(sizes)).resolves.toBeUndefined()
    expect(collections).toEqual([100 * MiB])
    expect(budget.usage()).toMatchObject({ refusing_writes: false, refused_writes: 0, release: { releases: 1, for_room: 1 } })
    // grown again within the interval: refused, no second release
    held.rss = 950 * MiB
    held.pool = 100 * MiB
    await expect(budget.assertRoom(sizes)).rejects.toBeInstanceOf(MemoryBudgetError)
    expect(collections).toHaveLength(1)
    budget.close()
    // a release that would leave it over the mark (950 - 40 = 910) is not run: refused at once
    const short = { rss: 950 * MiB, pool: 40 * MiB }
    let ran = 0
    const over = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT', releaseAfterMs: 10_000 }, { rss: () => short.rss, heapUsed: () => 10 * MiB, heapLimit: () => 4 * GiB }, {
      collect: () => async () => { ran += 1 },
      read: async () => ({ rss: short.rss, v8Pages: 200 * MiB + short.pool, pagedCommitted: 200 * MiB, pagedUnused: 0, heapUsed: 10 * MiB })
    })
    await expect(over.assertRoom(sizes)).rejects.toBeInstanceOf(MemoryBudgetError)
    expect(ran).toBe(0)
    over.close()
  })

  it('over 90% resident while fold threads run, waits for them to end and takes the write if that made the room; refuses past the wait', async () => {
    // a fold's heap holds 100 MiB of the 950 resident until it ends, 600 ms from now
    const held = { rss: 950 * MiB, folds: 1 }
    setTimeout(() => { held.rss = 850 * MiB; held.folds = 0 }, 600)
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, { rss: () => held.rss, heapUsed: () => 10 * MiB, heapLimit: () => 4 * GiB }, { foldsRunning: () => held.folds })
    const started = performance.now()
    await expect(budget.assertRoom(sizes)).resolves.toBeUndefined()
    expect(performance.now() - started).toBeGreaterThanOrEqual(550)
    expect(budget.usage()).toMatchObject({ refusing_writes: false, refused_writes: 0, fold_waits: 1 })
    // a fold that outlasts the wait: refused once it is over
    const stuck = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, probe(950 * MiB, 10 * MiB), { foldsRunning: () => 1, foldWaitMs: 300 })
    const at = performance.now()
    await expect(stuck.assertRoom(sizes)).rejects.toBeInstanceOf(MemoryBudgetError)
    expect(performance.now() - at).toBeGreaterThanOrEqual(290)
    expect(stuck.usage()).toMatchObject({ refused_writes: 1, fold_waits: 1 })
    // no fold running: refused at once, no wait counted
    const none = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, probe(950 * MiB, 10 * MiB), { foldsRunning: () => 0 })
    await expect(none.assertRoom(sizes)).rejects.toBeInstanceOf(MemoryBudgetError)
    expect(none.usage()).toMatchObject({ refused_writes: 1, fold_waits: 0 })
  })

  it('refuses at 85% of the heap limit, and says the limit was taken from the machine when it was', async () => {
    const budget = new MemoryBudget({ bytes: 16 * GiB, source: 'machine' }, probe(GiB, 0.85 * 4 * GiB))
    await expect(budget.assertRoom(sizes)).rejects.toThrow(/the heap holds 3\.40 GiB of its limit 4\.00 GiB \(writes stop at 85%; the limit taken from the machine \(MEMORY_LIMIT unset\) is 16\.00 GiB\)/)
  })
})
