/**
 * What taking a PDF's pictures costs the reading of a text-only PDF, interleaved in one run, ratios of medians:
 * `readPdf` as it reads now (pictures on), the same without pictures (the reading before issue 42), and, with
 * `--base DIR` (a tree of another commit, e.g. `git archive 91f31e2` with node_modules linked), that tree's `readPdf`
 * (91f31e2 walked every page's operator list for image XObjects, even in a file that holds none).
 *
 *   npx tsx bench/pdf-pictures-cost.ts [file.pdf] [rounds] [--base DIR] [--out file.json]
 */
import { readFile, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { readPdf } from '../src/corpus/formats/pdf.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, base: { type: 'string' } } })
const file = positionals[0] ?? join(import.meta.dirname, '../test/fixtures/files/handbook.pdf')
const rounds = Number(positionals[1] ?? 30)
const bytes = new Uint8Array(await readFile(file))
type Reader = typeof readPdf
const baseRead: Reader | undefined = values.base
  ? (await import(join(resolve(values.base), 'src/corpus/formats/pdf.ts')) as { readPdf: Reader }).readPdf
  : undefined

const arms: Array<{ name: string; read: () => ReturnType<Reader> }> = [
  { name: 'with_pictures', read: () => readPdf(bytes) },
  { name: 'without_pictures', read: () => readPdf(bytes, undefined, { pictures: false }) },
  ...(baseRead ? [{ name: 'base_with_pictures', read: () => baseRead(bytes) }] : [])
]
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const times = new Map(arms.map((a) => [a.name, [] as number[]]))
const images = new Map<string, number>()
const load = [loadavg()[0]!]
for (const arm of arms) await arm.read()
for (let i = 0; i < rounds; i++) {
  // rotate which goes first, so that no arm always runs on a warmer process
  for (let k = 0; k < arms.length; k++) {
    const arm = arms[(i + k) % arms.length]!
    const started = performance.now()
    const r = await arm.read()
    times.get(arm.name)!.push(performance.now() - started)
    if (r.outcome !== 'read') throw new Error(`${file}: ${r.outcome}`)
    images.set(arm.name, r.images?.length ?? 0)
  }
  if (i % 10 === 9) load.push(loadavg()[0]!)
}
const m = (name: string) => median(times.get(name)!)
const round = (x: number, d = 100) => Math.round(x * d) / d
const result = {
  command: `npx tsx bench/pdf-pictures-cost.ts ${process.argv.slice(2).join(' ')}`.trim(),
  file: file.replace(/^.*\/test\//, 'test/'), rounds, images_found: Object.fromEntries(images),
  median_ms: Object.fromEntries(arms.map((a) => [a.name, round(m(a.name))])),
  with_over_without: round(m('with_pictures') / m('without_pictures'), 1000),
  ...(baseRead ? { with_over_base: round(m('with_pictures') / m('base_with_pictures'), 1000), base_over_without: round(m('base_with_pictures') / m('without_pictures'), 1000) } : {}),
  load_1min: { min: round(Math.min(...load)), max: round(Math.max(...load)) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)
