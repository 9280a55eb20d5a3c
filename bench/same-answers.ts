/**
 * Whether this tree answers exactly as another (`--base DIR`) on the demo world: each tree's service opened on the demo
 * data (real model, derivation on: the demo documents' derived graph and Episodes beside the imported ones), the 62 demo
 * questions (`bench/judged/demo-corpus.jsonl`) sent to `/retrieve` in each arm below, and each body compared byte for
 * byte without the fields that differ between any two runs (`generation`, `took_ms`, `cached`). A change that keeps
 * every answer (a store's memory, say) shows 0 differences.
 *
 *   npx tsx bench/same-answers.ts --base DIR [--out FILE] [--bodies FILE] [--restart] [--from DATA_DIR] [--unsettled]
 *
 * Each service is asked once its start-up steps and its background writes have ended (`Tree.settled`): the entity
 * names' vectors are written in the background after each graph write, and a question asked while they were being written
 * was answered over the names embedded so far, which differ between two runs of one tree (issue 44: an A/A run of 6b76644
 * gave 492/496, the differences all names found by meaning in one run and not yet embedded in the other).
 * `--unsettled` asks as soon as the app is ready, as before, to show that race.
 *
 * `--bodies FILE`: every body of both trees written to FILE (JSON: question, arm, this, base), to read a difference whole.
 *
 * `--restart`: each tree's service is closed after the demo world is written, its knowledge graph's log and its vector
 * collections' logs folded into snapshots by the tree's own code (bench/lib/fold-graph.ts), and the questions are asked of a service opened again on
 * those files: the answers of a restart that reads each tree's snapshot form.
 *
 * `--from DATA_DIR`: instead of the demo world, each tree's service opens a copy of a kept folder (`bench/memory.ts --keep`:
 * stand-in vectors, derivation on, namespace `default`) and is asked the same questions in the same arms: the answers over
 * tens of thousands of chunks, where a vector search ranks far more rows than it keeps (on the demo world's few hundred
 * an int8 store scores every row again exactly).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { foldGraphWith, foldVectorsWith } from './lib/fold-graph.js'
import { ANSWER_ARMS, answeringSettings, stableBody } from './lib/demo-answers.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({ options: { base: { type: 'string' }, out: { type: 'string' }, restart: { type: 'boolean', default: false }, from: { type: 'string' }, bodies: { type: 'string' }, unsettled: { type: 'boolean', default: false } } })
if (!args.base) throw new Error('--base DIR: the tree to compare with')

const ARMS = ANSWER_ARMS

const questions = (await readFile('bench/judged/demo-corpus.jsonl', 'utf8')).split('\n').filter(Boolean)
  .map((line) => (JSON.parse(line) as { query: string }).query)

async function answers(tree: Tree): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-same-answers-'))
  if (args.from) await cp(args.from, dir, { recursive: true })
  const config = await tree.loadConfig(answeringSettings(dir, process.env['MODEL_DIR'] ?? join(tree.dir, 'models'), !args.from))
  // the demo world is written at the first opening (the services load it only when asked, as the server asks)
  let services = await tree.openServices(config, (providers: unknown) => providers, { loadDemo: !args.from })
  let app = await tree.buildApp(config, services)
  await app.ready()
  if (!args.unsettled) await tree.settled(services)
  if (args.restart) {
    await app.close()
    await foldGraphWith(tree.dir, dir, tree.name === 'base' ? Number(process.env['BASE_GRAPH_FORMAT'] ?? 1) : 2)
    await foldVectorsWith(tree.dir, dir)
    services = await tree.openServices(config, (providers: unknown) => providers)
    app = await tree.buildApp(config, services)
    await app.ready()
    if (!args.unsettled) await tree.settled(services)
  }
  const bodies: string[] = []
  try {
    for (const query of questions) {
      for (const arm of ARMS) {
        const response = await app.inject({ method: 'POST', url: '/retrieve', payload: { ...arm, query, top_k: 10 } })
        const body = JSON.parse(response.body) as Record<string, unknown>
        bodies.push(`${response.statusCode} ${stableBody(body)}`)
      }
    }
  } finally {
    await app.close()
    await rm(dir, { recursive: true, force: true })
  }
  return bodies
}

const trees = [loadTree('this', '.'), loadTree('base', args.base)]
const startedLoad = loadavg().map((x) => Math.round(x * 10) / 10)
const [mine, theirs] = [await answers(trees[0]!), await answers(trees[1]!)]
// each differing body from a little before where it first differs, so the difference itself is in the report
const firstDifference = (a: string, b: string) => { let at = 0; while (at < a.length && a[at] === b[at]) at++; return at }
const differing = mine.flatMap((body, i) => {
  if (body === theirs[i]) return []
  const at = firstDifference(body, theirs[i]!)
  const from = Math.max(0, at - 200)
  return [{ question: questions[Math.floor(i / ARMS.length)], arm: ARMS[i % ARMS.length], first_difference_at: at, this: body.slice(from, at + 400), base: theirs[i]!.slice(from, at + 400) }]
})
const report = {
  generated_by: 'bench/same-answers.ts', at: new Date().toISOString(),
  trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
  restarted: args.restart, settled: !args.unsettled, data: args.from ?? 'the demo world', questions: questions.length, arms: ARMS, bodies: mine.length, identical: mine.length - differing.length,
  ok_bodies: mine.filter((b) => b.startsWith('200 ')).length,
  bodies_with_items: mine.filter((b) => b.startsWith('200 ') && !b.includes('"recall_bundle":[]')).length,
  load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => Math.round(x * 10) / 10),
  differing_by_arm: Object.fromEntries(ARMS.map((arm) => [JSON.stringify(arm), differing.filter((d) => d.arm === arm).length])),
  differing: differing.slice(0, 5)
}
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)
if (args.bodies) {
  const all = mine.map((body, i) => ({ question: questions[Math.floor(i / ARMS.length)], arm: ARMS[i % ARMS.length], this: body, base: theirs[i] }))
  await writeFile(args.bodies, `${JSON.stringify(all)}\n`)
}
