/**
 * The chunker's own share of an ingest, beside b50e7a5 (before the micromark chunker): `chunkDocument` over the
 * synthetic CMRC documents of bench/ingest-rate.ts, each tree's own, in one process per tree, three passes (the first
 * warms the JIT; the best of the other two is kept). Nothing is embedded or written. Writes
 * bench/results/chunking-cost.json.
 *
 *   npx tsx bench/chunking-cost.ts --base ../wt-before [--chunks 10000]
 */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { loadCmrc } from './lib/cmrc.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '10000' }, base: { type: 'string' }, tree: { type: 'string' } } })
const count = Number(values.chunks)

if (values.tree) {
  const { chunkDocument } = await import(join(resolve(values.tree), 'src/corpus/documents.ts'))
  const { documents } = await loadCmrc()
  const docs = syntheticDocuments(documents.map((d) => d.text), count)
  const passes: number[] = []
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now()
    let chunks = 0
    for (const d of docs) chunks += (chunkDocument(d) as unknown[]).length
    passes.push(performance.now() - started)
    if (chunks !== count) throw new Error(`${chunks} chunks of ${count} documents`)
  }
  console.log(JSON.stringify({ ms: Math.round(Math.min(passes[1]!, passes[2]!)), passes: passes.map(Math.round) }))
} else {
  if (!values.base) throw new Error('--base DIR is needed')
  const exec = promisify(execFile)
  const run = async (tree: string) => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'bench/chunking-cost.ts', '--tree', tree, '--chunks', String(count)])
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as { ms: number; passes: number[] }
  }
  const load = loadavg()[0]!
  const base = await run(resolve(values.base))
  const self = await run(resolve('.'))
  const result = JSON.stringify({
    date: new Date().toISOString(), documents: count, base: values.base, base_ms: base.ms, this_ms: self.ms,
    base_ms_per_document: Math.round((base.ms / count) * 1000) / 1000, this_ms_per_document: Math.round((self.ms / count) * 1000) / 1000,
    passes: { base: base.passes, this: self.passes }, load_average: [load, loadavg()[0]!]
  }, null, 2)
  console.log(result)
  await writeFile('bench/results/chunking-cost.json', `${result}\n`)
}
