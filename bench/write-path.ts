/**
 * One write through the service, this tree beside another (the previous main), in one run: both servers run on
 * their embedded default with a fresh DATA_DIR each, and the client sends the same single-document writes to
 * each in turn (rounds alternate which goes first, so that drift on a busy machine falls on both). Per tree: p50
 * and p99 of `POST /ingest/documents` (one new document of 3 chunks, the real local model), of the same write
 * sent again (unchanged), and of `DELETE /documents/{id}`; the ratio this ÷ base of each. Writes
 * bench/results/write-path.json.
 *
 *   npx tsx bench/write-path.ts --base ../previous-main [--rounds 10] [--per-round 20] [--out bench/results/write-path.json]
 *     [--env KEY=VALUE,KEY=VALUE]   (settings given to both trees' servers; a tree ignores a key it does not know)
 *     [--plain]   (the documents have no headings: no contextual header, the same text embedded by both trees)
 *
 * `--base` is a checkout of the other tree with its node_modules and models (a `git worktree` with both linked).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { envPairs } from './lib/env-pairs.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string' }, rounds: { type: 'string', default: '10' }, 'per-round': { type: 'string', default: '20' },
    out: { type: 'string', default: 'bench/results/write-path.json' },
    env: { type: 'string', default: '' },
    // documents without headings: no contextual header, so both trees embed the same text
    plain: { type: 'boolean', default: false }
  }
})
if (!values.base) throw new Error('--base DIR: a checkout of the tree to compare with')
const rounds = Number(values.rounds)
const perRound = Number(values['per-round'])
const extraEnv = envPairs(values.env)

interface Tree { name: string; dir: string; server?: ServerProcess; dataDir?: string; times: Record<Op, number[]> }
type Op = 'ingest' | 'again' | 'delete'

const trees: Tree[] = [
  { name: 'base', dir: resolve(values.base), times: { ingest: [], again: [], delete: [] } },
  { name: 'this', dir: resolve('.'), times: { ingest: [], again: [], delete: [] } }
]

const headed = (i: number) => `# 第 ${i} 份值班说明\n\n夜间告警由二线值班处理，编号 w${i}。\n\n## 升级\n\n十五分钟无人响应则升级到三线，编号 w${i}。\n\n## 复盘\n\n每次升级都要在周会上复盘，编号 w${i}。`
const plain = (i: number) => `夜间告警由二线值班处理，编号 w${i}。\n\n十五分钟无人响应则升级到三线，编号 w${i}。\n\n每次升级都要在周会上复盘，编号 w${i}。`
const text = values.plain ? plain : headed

async function timed(url: string, method: string, body?: object): Promise<number> {
  const started = performance.now()
  const r = await fetch(url, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) })
  await r.arrayBuffer()
  if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status}`)
  return performance.now() - started
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}
const round2 = (x: number) => Math.round(x * 100) / 100

async function main(): Promise<void> {
  const load: number[] = [loadavg()[0]!]
  try {
    for (const tree of trees) {
      tree.dataDir = await mkdtemp(join(tmpdir(), `recall-bench-write-${tree.name}-`))
      tree.server = await startServer({ DATA_DIR: tree.dataDir, DEMO_DATA: 'false', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', ...extraEnv },
        { args: ['--import', 'tsx', join(tree.dir, 'src/http/server.ts')], timeoutMs: 300_000 }) // a loaded machine loads the model slowly
      // the model's first runs and the library's first write, before anything is timed
      for (let i = 0; i < 5; i++) await timed(`${tree.server.url}/ingest/documents`, 'POST', { documents: [{ id: `warm-${i}`, text: text(-i) }] })
    }
    let n = 0
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? trees : [...trees].reverse()
      for (const tree of order) {
        for (let i = 0; i < perRound; i++) {
          const doc = { id: `d-${r}-${i}`, text: text(n++) }
          tree.times.ingest.push(await timed(`${tree.server!.url}/ingest/documents`, 'POST', { documents: [doc] }))
          tree.times.again.push(await timed(`${tree.server!.url}/ingest/documents`, 'POST', { documents: [doc] }))
          tree.times.delete.push(await timed(`${tree.server!.url}/documents/${doc.id}`, 'DELETE'))
        }
      }
      load.push(loadavg()[0]!)
    }
  } finally {
    for (const tree of trees) {
      await tree.server?.kill()
      if (tree.dataDir) await rm(tree.dataDir, { recursive: true, force: true })
    }
  }
  const ops: Op[] = ['ingest', 'again', 'delete']
  const rows = ops.map((op) => {
    const [base, self] = trees.map((t) => ({ p50: round2(quantile(t.times[op], 0.5)), p99: round2(quantile(t.times[op], 0.99)) }))
    return { op, n: trees[1]!.times[op].length, base, this: self, ratio_p50: round2(self!.p50 / base!.p50), ratio_p99: round2(self!.p99 / base!.p99) }
  })
  const result = {
    when: new Date().toISOString(), cores: cpus().length, load_1m: load.map(round2),
    base: trees[0]!.dir, env: extraEnv, document: values.plain ? 'plain' : 'headed', sample: text(0), rounds, per_round: perRound, rows
  }
  await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)
  console.log('| write | n | base p50 / p99 (ms) | this p50 / p99 (ms) | this ÷ base p50 / p99 |')
  console.log('|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.op} | ${r.n} | ${r.base!.p50} / ${r.base!.p99} | ${r.this!.p50} / ${r.this!.p99} | ${r.ratio_p50} / ${r.ratio_p99} |`)
  console.log(`load (1 min) ${result.load_1m.join(' → ')}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
