/**
 * Where a V8 CPU profile (`node --cpu-prof`, or `npx tsx --cpu-prof --cpu-prof-dir DIR bench/...`) spent its time:
 * self time of the busiest functions, and the inclusive time of the functions named (a function counts once per sample
 * however deep it recurses; time an async function spends awaiting is not its own).
 *
 *   npx tsx bench/cpu-profile-summary.ts PROFILE.cpuprofile [--top 20] [--functions planDerived,commit,...] [--out FILE] [--per-sample]
 *
 * `--per-sample` weighs every sample alike (the median interval) instead of by the time since the one before: a process
 * stopped meanwhile (SIGSTOP, a machine held quiet for another bench) otherwise lays the stop on one sample.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '20' }, functions: { type: 'string', default: '' }, out: { type: 'string' }, 'per-sample': { type: 'boolean', default: false } }
})
if (positionals.length !== 1) throw new Error('one .cpuprofile file')

const profile = JSON.parse(await readFile(positionals[0]!, 'utf8')) as Profile
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const name = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').at(-1) ?? ''}`.trim()

const interval = [...profile.timeDeltas].sort((a, b) => a - b)[Math.floor(profile.timeDeltas.length / 2)] ?? 0
const weightOf = (i: number) => (values['per-sample'] ? interval : profile.timeDeltas[i] ?? 0)
const sampled = new Map<number, number>()
profile.samples.forEach((id, i) => sampled.set(id, (sampled.get(id) ?? 0) + weightOf(i)))
const total = [...sampled.values()].reduce((a, b) => a + b, 0)

const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const wanted = new Set(values.functions.split(',').filter((f) => f !== ''))
for (const [id, us] of sampled) {
  const node = nodes.get(id)!
  self.set(name(node), (self.get(name(node)) ?? 0) + us)
  const seen = new Set<string>()
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const fn = nodes.get(at)!.callFrame.functionName
    if (wanted.has(fn) && !seen.has(fn)) {
      seen.add(fn)
      inclusive.set(fn, (inclusive.get(fn) ?? 0) + us)
    }
  }
}

const seconds = (us: number) => Math.round(us / 1e5) / 10
const share = (us: number) => Math.round((1000 * us) / total) / 10
const summary = {
  generated_by: 'bench/cpu-profile-summary.ts',
  profile: positionals[0],
  sampled_seconds: seconds(total),
  weighed: values['per-sample'] ? `each sample alike (${interval} µs, the median interval)` : 'by the time since the sample before',
  self_top: [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)).map(([fn, us]) => ({ function: fn, seconds: seconds(us), percent: share(us) })),
  inclusive: [...wanted].map((fn) => ({ function: fn, seconds: seconds(inclusive.get(fn) ?? 0), percent: share(inclusive.get(fn) ?? 0) }))
}
console.log(JSON.stringify(summary, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(summary, null, 2)}\n`)
