/**
 * Combines runs of bench/locomo.ts over some conversations each (run side by side to finish sooner) into one report:
 * the same per-category comparisons with paired bootstrap intervals over all their questions, the latency p50 over
 * all questions, and each conversation's costs. `npx tsx bench/locomo-combine.ts part1.json part2.json … > out.json`
 */
import { readFile } from 'node:fs/promises'
import { compare, p50, round, type QuestionRow } from './lib/locomo-compare.js'

interface Part { model: string; conversations: string[]; rows: QuestionRow[]; costs: unknown[]; latencies_ms: { episodic: number[]; hybrid: number[] }; load_at_end: number[] }

const parts = await Promise.all(process.argv.slice(2).map(async (f) => JSON.parse(await readFile(f, 'utf8')) as Part))
const rows = parts.flatMap((p) => p.rows)

console.log(JSON.stringify({
  models: [...new Set(parts.map((p) => p.model))], conversations: parts.flatMap((p) => p.conversations),
  all: compare(rows),
  by_category: Object.fromEntries(([[1, 'multi_hop'], [2, 'temporal'], [3, 'open_domain'], [4, 'single_hop']] as const).map(([c, name]) => [name, compare(rows.filter((r) => r.category === c))])),
  latency: {
    episodic_p50_ms: round(p50(parts.flatMap((p) => p.latencies_ms.episodic)), 1), hybrid_p50_ms: round(p50(parts.flatMap((p) => p.latencies_ms.hybrid)), 1),
    note: 'runs side by side on a shared machine: see the load of each part'
  },
  costs: parts.flatMap((p) => p.costs),
  load_at_end: parts.map((p) => p.load_at_end)
}, null, 2))
