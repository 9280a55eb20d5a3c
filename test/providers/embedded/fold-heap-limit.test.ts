/**
 * A fold thread's heap limit (`fold-client.ts`): sized from the files it folds, and a fold that runs out of it run once
 * more without it, ending with the snapshot the whole fold writes and nothing half-written in its place.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { DurableLog, encodeSnapshotFile } from '../../../src/providers/embedded/durable-log.js'
import { foldEntry, foldHeapLimitMb, foldRuns, foldWithinLimit } from '../../../src/providers/embedded/fold-client.js'
import { EmbeddedKnowledgeGraphStore, foldKnowledgeGraph } from '../../../src/providers/knowledge-graph/embedded.js'

const IDENTITY = { kind: 'knowledge-graph', format: 2, reads: [1] }
const BACKEND = 'knowledge-graph:test'
const KG_EMBEDDED = new URL('../../../src/providers/knowledge-graph/embedded.ts', import.meta.url).href
const MiB = 2 ** 20
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('a fold thread\'s heap limit', () => {
  it('is a 64 MiB margin and 4 bytes a byte of both files folded whole; folded in blocks, 6 bytes a byte of the log it holds at once and a quarter byte a byte of snapshot', () => {
    // 64 + 6 × 10 + 100 / 4
    expect(foldHeapLimitMb({ snapshotBytes: 100 * MiB, logBytes: 10 * MiB }, true)).toBe(149)
    // a fold that holds at most 4 MiB of the log at once: 64 + 6 × 4 + 100 / 4
    expect(foldHeapLimitMb({ snapshotBytes: 100 * MiB, logBytes: 10 * MiB }, true, 4 * MiB)).toBe(113)
    // the log outgrew the snapshot: the whole fold holds both, 64 + 4 × 30
    expect(foldHeapLimitMb({ snapshotBytes: 10 * MiB, logBytes: 20 * MiB }, true)).toBe(184)
    // the log outgrew the snapshot, and the two are over what such a fold takes whole: in blocks, 64 + 6 × 64 + 50 / 4
    expect(foldHeapLimitMb({ snapshotBytes: 50 * MiB, logBytes: 200 * MiB }, true, 64 * MiB, 64 * MiB)).toBe(461)
    // within it: whole, 64 + 4 × 60
    expect(foldHeapLimitMb({ snapshotBytes: 20 * MiB, logBytes: 40 * MiB }, true, 64 * MiB, 64 * MiB)).toBe(304)
    // a store that folds whole: 64 + 4 × 110
    expect(foldHeapLimitMb({ snapshotBytes: 100 * MiB, logBytes: 10 * MiB }, false)).toBe(504)
    expect(foldHeapLimitMb({ snapshotBytes: 0, logBytes: 1 }, true)).toBe(65)
    // the knowledge graph at 1M chunks (bench/results/kg-fold-from-folder-1m-ranged.json): 64 + 6 × 64 + 836.2 / 4
    expect(foldHeapLimitMb({ snapshotBytes: 836.2 * MiB, logBytes: 176.2 * MiB }, true, 64 * MiB)).toBe(658)
  })

  it('runs a fold that ran out of a too small limit again without it, and it ends with the whole fold\'s snapshot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-fold-limit-'))
    dirs.push(dir)
    // a small snapshot, then 40 MB of log after it: the fold holds the log whole, far over 24 MiB
    const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 1e12 })
    await store.upsert('default', { entities: [{ id: 'first', name: '第一', aliases: [], source_chunk_ids: [] }] })
    await store.close()
    const opened = await DurableLog.open({ backend: BACKEND, ...IDENTITY, dir, name: 'knowledge-graph' })
    await opened.log.compact(foldKnowledgeGraph(opened.snapshot, opened.records))
    const more = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 1e12 })
    for (let i = 0; i < 80; i += 10) {
      await more.upsert('default', {
        entities: Array.from({ length: 10 }, (_, k) => ({ id: `e${i + k}`, name: `实体${i + k}`, aliases: [], source_chunk_ids: [], description: `${i + k}`.padEnd(500_000, '描') }))
      })
    }
    await more.close()
    const { log, snapshot, records } = await DurableLog.open({ backend: BACKEND, ...IDENTITY, dir, name: 'knowledge-graph' })
    const fold = (await log.beginCompaction())!
    const expected = encodeSnapshotFile(fold.seq, foldKnowledgeGraph(snapshot, records), IDENTITY)

    const warnings: string[] = []
    const limits: number[] = []
    const written = await foldWithinLimit(foldEntry('fold-thread', KG_EMBEDDED), { ...IDENTITY, backend: BACKEND, fold }, {
      blocks: true, warn: (message) => warnings.push(message), heapMb: () => { limits.push(24); return 24 }
    })
    expect(limits).toEqual([24])
    expect(foldRuns.at(-1)).toMatchObject({ kind: 'knowledge-graph', heapMb: 24, ranOutOfHeap: true, logBytes: (await stat(fold.foldFile)).size })
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/ran out of its 24 MiB heap; folding it again without that limit/)
    expect((await readFile(written.file)).equals(expected)).toBe(true)
    await log.finishCompaction(fold, written)
    await log.close()
    // the store reads the folded files as it wrote them: 81 entities, none left in a log
    expect((await readdir(dir)).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap'])
    const reopened = new EmbeddedKnowledgeGraphStore({ dir })
    expect(await reopened.count('default')).toEqual({ entities: 81, relations: 0 })
    await reopened.close()
  }, 240_000)

  it('holds in a process started with --max-old-space-size, which V8 gives every new isolate over the limit a worker asks for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-fold-limit-flag-'))
    dirs.push(dir)
    // a fold-thread entry that holds 200 MiB before it answers: over a 64 MiB limit, under the process's 1,000 MiB
    const entry = join(dir, 'holds-200-mib.mjs')
    await writeFile(entry, [
      "import { parentPort } from 'node:worker_threads'",
      'const held = []',
      'for (let i = 0; i < 200; i++) held.push(new Array(131072).fill(i))',
      "parentPort.postMessage({ file: 'none', bytes: held.length })"
    ].join('\n'))
    const client = new URL('../../../src/providers/embedded/fold-client.ts', import.meta.url).href
    const script = [
      `import { foldWithinLimit } from ${JSON.stringify(client)}`,
      "import { getHeapStatistics } from 'node:v8'",
      'const warnings = []',
      `const fold = { snapshotFile: ${JSON.stringify(join(dir, 'none.snap'))}, foldFile: ${JSON.stringify(join(dir, 'none.fold.log'))}, seq: 1 }`,
      `await foldWithinLimit(new URL(${JSON.stringify(pathToFileURL(entry).href)}), { kind: 'test', format: 1, backend: 'test', fold }, { blocks: true, warn: (m) => warnings.push(m), heapMb: () => 64 })`,
      'console.log(JSON.stringify({ warnings, mainLimitMib: getHeapStatistics().heap_size_limit / 2 ** 20 }))'
    ].join('\n')
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-old-space-size=1000', '--import', tsx, '--input-type=module', '-e', script])
    const { warnings, mainLimitMib } = JSON.parse(stdout) as { warnings: string[]; mainLimitMib: number }
    // the thread ran out of its 64 MiB and was run again without it; the main isolate kept its 1,000 MiB
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/ran out of its 64 MiB heap/)
    expect(mainLimitMib).toBeGreaterThanOrEqual(1000)
  }, 120_000)
})
