/** What a run's garbage-collection pauses come to (bench/follower-memory.ts), from the entries bench/lib/gc-recorder.ts kept. */

export interface GcPause { at_ms: number; ms: number; kind: string }

export interface PauseSummary { count: number; p50_ms: number; p99_ms: number; max_ms: number; sum_ms: number; over_10_ms: number; over_50_ms: number }

/** Nearest-rank percentiles (the smallest pause with at least p% of the pauses at or below it); zeros when none. */
export function pauseSummary(pauses: readonly GcPause[]): PauseSummary {
  const ms = pauses.map((p) => p.ms).sort((a, b) => a - b)
  const rank = (p: number) => ms.length === 0 ? 0 : ms[Math.max(0, Math.ceil((p / 100) * ms.length) - 1)]!
  const r3 = (x: number) => Math.round(x * 1000) / 1000
  return {
    count: ms.length, p50_ms: r3(rank(50)), p99_ms: r3(rank(99)), max_ms: r3(ms.at(-1) ?? 0),
    sum_ms: r3(ms.reduce((s, x) => s + x, 0)), over_10_ms: ms.filter((x) => x > 10).length, over_50_ms: ms.filter((x) => x > 50).length
  }
}

/** The summary of every pause and of each kind's (minor, major, incremental, weakcb). */
export function pausesByKind(pauses: readonly GcPause[]): Record<string, PauseSummary> {
  const kinds = [...new Set(pauses.map((p) => p.kind))].sort()
  return { all: pauseSummary(pauses), ...Object.fromEntries(kinds.map((k) => [k, pauseSummary(pauses.filter((p) => p.kind === k))])) }
}
