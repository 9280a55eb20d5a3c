/**
 * Paired differences between the settings of a `bench/derived-quality.ts --variants` result, question by question, from
 * each question's rank of its first answering chunk (`ranks`, 0: none in the first 10): Recall@5 and MRR@10 of each
 * setting minus the baseline's, with a 95% bootstrap interval of the mean difference (10,000 resamples of the
 * questions, seed 1), and how many questions rank higher, lower or the same.
 *
 *   npx tsx bench/paired-ranks.ts bench/results/derived-quality-variants-NAME.json [--mode episodic] [--baseline episodes_chunk_no_entities]
 *
 * Prints JSON; with `--out FILE` also writes it there.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { bootstrapMean, resamples } from '../src/evaluation/statistics.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { mode: { type: 'string', default: 'episodic' }, baseline: { type: 'string', default: 'episodes_chunk_no_entities' }, out: { type: 'string' } }
})
const file = positionals[0]
if (!file) throw new Error('usage: npx tsx bench/paired-ranks.ts RESULT.json [--mode M] [--baseline SETTING] [--out FILE]')
const result = JSON.parse(await readFile(file, 'utf8')) as { settings: Record<string, Record<string, { ranks?: number[] }>> }
const ranksOf = (setting: string): number[] => {
  const ranks = result.settings[setting]?.[values.mode]?.ranks
  if (!ranks) throw new Error(`${file} has no ${values.mode} ranks for ${setting}`)
  return ranks
}
const base = ranksOf(values.baseline)
const samples = resamples(base.length, 10_000, 1)
const round = (x: number) => Math.round(x * 1000) / 1000
const r5 = (r: number) => (r > 0 && r <= 5 ? 1 : 0)
const rr = (r: number) => (r > 0 ? 1 / r : 0)
const interval = (xs: number[]) => { const i = bootstrapMean(xs, samples); return { mean: round(i.mean), ci_low: round(i.ci_low), ci_high: round(i.ci_high) } }
const out: Record<string, unknown> = { file, mode: values.mode, baseline: values.baseline, questions: base.length, against_baseline: {} }
for (const setting of Object.keys(result.settings)) {
  if (setting === values.baseline || !result.settings[setting]?.[values.mode]?.ranks) continue
  const ranks = ranksOf(setting)
  const better = ranks.filter((r, i) => rr(r) > rr(base[i]!)).length
  const worse = ranks.filter((r, i) => rr(r) < rr(base[i]!)).length
  ;(out['against_baseline'] as Record<string, unknown>)[setting] = {
    recall_at_5_difference: interval(ranks.map((r, i) => r5(r) - r5(base[i]!))),
    mrr_at_10_difference: interval(ranks.map((r, i) => rr(r) - rr(base[i]!))),
    questions_higher: better, questions_lower: worse, questions_same: ranks.length - better - worse
  }
}
console.log(JSON.stringify(out, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(out, null, 2)}\n`)
