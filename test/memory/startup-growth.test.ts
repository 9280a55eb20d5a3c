import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { fixedGrowingPercent } from '../../src/memory/startup-growth.js'

describe('the heap growing factor during start-up', () => {
  it('finds the fixed factor node was started with, in either spelling; none when unset or zero', () => {
    expect(fixedGrowingPercent(['--max-old-space-size=4096', '--heap-growing-percent=50'])).toBe(50)
    expect(fixedGrowingPercent(['--heap_growing_percent=30'])).toBe(30)
    expect(fixedGrowingPercent(['--heap-growing-percent=10', '--heap-growing-percent=70'])).toBe(70)
    expect(fixedGrowingPercent(['--expose-gc'])).toBeUndefined()
    expect(fixedGrowingPercent(['--heap-growing-percent=0'])).toBeUndefined()
  })

  // A child process started as the service is (fixed factor 1.5) keeps ~1.2 GiB of small objects, as a start-up reads
  // stores, and counts the full collections (mark-compact, `kind` 4) meanwhile; then it lets them go, collects, and
  // keeps as much again. V8's own factor grows the heap up to 4x between full collections, the fixed one 1.5x: from
  // ~50 MiB to ~1.2 GiB that is 6 full collections fixed and 3 left to V8 (this machine). `never` leaves the factor to
  // V8 and does not put it back: its second half runs as few as its first, so a factor never put back is seen.
  const script = `
    import { PerformanceObserver } from 'node:perf_hooks'
    import { setFlagsFromString } from 'node:v8'
    import { growFreelyUntil } from './src/memory/startup-growth.ts'
    const marks = []
    new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail?.kind === 4) marks.push(e.startTime) }).observe({ entryTypes: ['gc'] })
    let kept = []
    const keep = (n) => { for (let i = 0; i < n; i++) kept.push({ a: i, b: 'x' + i, c: [i, i + 1] }) }
    const tick = () => new Promise((resolve) => setTimeout(resolve, 50))
    let settle
    if (process.argv[1] === 'freely') growFreelyUntil(new Promise((resolve) => { settle = resolve }))
    if (process.argv[1] === 'never') setFlagsFromString('--heap-growing-percent=0')
    keep(12_000_000)
    const during = performance.now()
    settle?.()
    await tick()
    kept = []
    globalThis.gc()
    await tick()
    const after = performance.now()
    keep(12_000_000)
    await tick()
    process.stdout.write(JSON.stringify({ during: marks.filter((t) => t < during).length, after: marks.filter((t) => t > after).length, kept: kept.length }))
  `
  const run = (arm: 'fixed' | 'freely' | 'never') => JSON.parse(execFileSync(process.execPath, [
    '--expose-gc', '--max-old-space-size=4096', '--heap-growing-percent=50', '--import', 'tsx', '--input-type=module', '-e', script, arm
  ], { encoding: 'utf8', timeout: 120_000 })) as { during: number; after: number; kept: number }

  it('is left to V8 until start-up settles (fewer full collections), then fixed again', () => {
    const fixed = run('fixed')
    const freely = run('freely')
    const never = run('never')
    expect(fixed.during).toBeGreaterThanOrEqual(5)
    expect(freely.during).toBeLessThanOrEqual(fixed.during - 2)
    // put back: the second half collects as often as the fixed factor does, and more often than a factor left to V8
    expect(freely.after).toBeGreaterThanOrEqual(fixed.after - 1)
    expect(freely.after).toBeGreaterThanOrEqual(never.after + 2)
    expect(freely.kept).toBe(12_000_000)
  }, 180_000)
})
