import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { HeapRelease, type HeapReleased } from '../../src/memory/heap-release.js'

const MiB = 2 ** 20
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('HeapRelease: when it collects', () => {
  const counted = (quietMs: number) => {
    const calls: number[] = []
    const reports: HeapReleased[] = []
    const release = new HeapRelease(quietMs, (r) => reports.push(r), () => async () => { calls.push(Date.now()) })
    return { release, calls, reports }
  }

  it('once, the quiet time after the last write ended; never while one runs', async () => {
    const { release, calls, reports } = counted(60)
    const first = release.writeBegins()
    const second = release.writeBegins()
    first()
    await wait(150)
    expect(calls).toHaveLength(0) // the second is still running
    const ended = Date.now()
    second()
    second() // ending twice counts once
    await wait(40)
    expect(calls).toHaveLength(0)
    await wait(120)
    expect(calls).toHaveLength(1)
    expect(calls[0]! - ended).toBeGreaterThanOrEqual(55)
    expect(reports).toHaveLength(1)
    expect(release.releases).toBe(1)
    await wait(150)
    expect(calls).toHaveLength(1) // no write since: nothing to give back
    release.close()
  })

  it('a write that begins within the quiet time puts it off', async () => {
    const { release, calls } = counted(80)
    release.writeBegins()()
    await wait(40)
    const again = release.writeBegins()
    await wait(120)
    expect(calls).toHaveLength(0)
    again()
    await wait(160)
    expect(calls).toHaveLength(1)
    release.close()
  })

  it('0 is off, and close() cancels one pending', async () => {
    const off = counted(0)
    off.release.writeBegins()()
    const closed = counted(50)
    closed.release.writeBegins()()
    closed.release.close()
    await wait(150)
    expect(off.calls).toHaveLength(0)
    expect(closed.calls).toHaveLength(0)
  })
})

describe('HeapRelease: what it gives back (a real V8)', () => {
  // A process allocates ~400 MiB of objects and lets most of them go. A full collection (gc(), as the budget's own
  // readings see) frees them, but V8 keeps the freed pages resident in its page pool; the release gives them back.
  const script = `
    import { HeapRelease } from './src/memory/heap-release.ts'
    const mib = () => process.memoryUsage.rss() / 2 ** 20
    let kept = []
    for (let i = 0; i < 8; i++) { const a = []; for (let j = 0; j < 1e6; j++) a.push({ x: j, y: 'k' + j }); kept.push(a) }
    kept = kept.slice(0, 1)
    const release = new HeapRelease(process.argv[1] === 'on' ? 100 : 0, (r) => { console.log(JSON.stringify({ ...r, kept: kept.length })) })
    release.writeBegins()()
    const before = mib()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    console.log(JSON.stringify({ before, after: mib() }))
  `
  const run = (arm: 'on' | 'off') => execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, arm], { encoding: 'utf8', timeout: 120_000 })
    .trim().split('\n').map((line) => JSON.parse(line) as Record<string, number>)

  it('the pages of the freed objects leave resident memory; without it they stay', () => {
    const on = run('on')
    expect(on).toHaveLength(2)
    const [report, after] = on as [HeapReleased & { kept: number }, { before: number; after: number }]
    // ~7/8 of ~400 MiB let go: at least 200 MiB fewer resident
    expect((report.rss_before_bytes - report.rss_after_bytes) / MiB).toBeGreaterThan(200)
    expect(after.before - after.after).toBeGreaterThan(200)
    expect(report.kept).toBe(1)
    const [off] = run('off') as [{ before: number; after: number }]
    expect(off.before - off.after).toBeLessThan(100)
  }, 240_000)
})
