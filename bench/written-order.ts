/**
 * Whether an answer is a function of what is stored, not of the order it was written in (issue 44, "every existing
 * answer is unchanged"): one service on the embedded stores (real model, derivation on) is given the demo world twice, in
 * two namespaces and two orders, and every demo question is asked of both in every arm; each pair of bodies is compared
 * byte for byte, the namespace's name and the fields that differ between any two runs (`generation`, `took_ms`,
 * `cached`) left out.
 *
 *   npx tsx bench/written-order.ts [--out FILE]
 *
 * `fwd`: the imported graph, the imported Episodes, then every document in one write (as the demo loader writes them).
 * `rev`: every document alone, the last first, then the Episodes and the graph with each of their lists reversed. Each
 * is asked once the background writes have ended (`Tree.settled`).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { ANSWER_ARMS, answeringSettings, stableBody } from './lib/demo-answers.js'
import { loadTree } from './lib/tree.js'

const { values: args } = parseArgs({ options: { out: { type: 'string' } } })

/** same-answers.ts' arms, and the imported Episodes alone. */
const ARMS = [...ANSWER_ARMS, { mode: 'episodic', structures: 'imported' }]

const tree = loadTree('this', '.')
const dir = await mkdtemp(join(tmpdir(), 'recall-written-order-'))
const config = await tree.loadConfig({ ...answeringSettings(dir, process.env['MODEL_DIR'] ?? join(tree.dir, 'models'), false), CACHE_TTL_SECONDS: '0' })
const startedLoad = loadavg().map((x) => Math.round(x * 10) / 10)
const services = await tree.openServices(config, (providers: unknown) => providers)
const app = await tree.buildApp(config, services)
await app.ready()
await tree.settled(services)

const graph = JSON.parse(await readFile('demo/graph.json', 'utf8')) as { entities: unknown[]; relations: unknown[] }
const episodes = JSON.parse(await readFile('demo/episodes.json', 'utf8')) as { entities: unknown[]; episodes: unknown[] }
const documentsOf = async (namespace: string) => checkedDocuments({ documents: await readDocuments(['demo/documents']), namespace })
const write = (namespace: string, change: unknown) => tree.write(services, namespace, change)
await write('fwd', { kind: 'graph', op: 'upsert', body: graph })
await write('fwd', { kind: 'episodes', op: 'upsert', body: episodes })
await write('fwd', { kind: 'documents', op: 'upsert', documents: await documentsOf('fwd') })
for (const document of (await documentsOf('rev')).reverse()) await write('rev', { kind: 'documents', op: 'upsert', documents: [document] })
await write('rev', { kind: 'episodes', op: 'upsert', body: { entities: [...episodes.entities].reverse(), episodes: [...episodes.episodes].reverse() } })
await write('rev', { kind: 'graph', op: 'upsert', body: { entities: [...graph.entities].reverse(), relations: [...graph.relations].reverse() } })
await tree.settled(services)

const questions = (await readFile('bench/judged/demo-corpus.jsonl', 'utf8')).split('\n').filter(Boolean)
  .map((line) => (JSON.parse(line) as { query: string }).query)
const bodyOf = async (namespace: string, arm: Record<string, unknown>, query: string) => {
  const response = await app.inject({ method: 'POST', url: '/retrieve', payload: { ...arm, query, top_k: 10, namespace } })
  const body = stableBody(JSON.parse(response.body))
  return `${response.statusCode} ${body.replaceAll(`"${namespace}"`, '"<namespace>"')}`
}
const differing: Array<{ question: string; arm: Record<string, unknown>; fwd: string; rev: string }> = []
let bodies = 0
let withItems = 0
try {
  for (const question of questions) {
    for (const arm of ARMS) {
      const [fwd, rev] = [await bodyOf('fwd', arm, question), await bodyOf('rev', arm, question)]
      bodies++
      if (fwd.startsWith('200 ') && !/"(recall_bundle|items)":\[\]/.test(fwd)) withItems++
      if (fwd !== rev) differing.push({ question, arm, fwd, rev })
    }
  }
} finally {
  await app.close()
  await rm(dir, { recursive: true, force: true })
}
const report = {
  generated_by: 'bench/written-order.ts', at: new Date().toISOString(), tree: { dir: tree.dir, commit: tree.commit },
  questions: questions.length, arms: ARMS, bodies, identical: bodies - differing.length, bodies_with_items: withItems,
  load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => Math.round(x * 10) / 10),
  differing_by_arm: Object.fromEntries(ARMS.map((arm) => [JSON.stringify(arm), differing.filter((d) => d.arm === arm).length])),
  differing: differing.slice(0, 5)
}
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)
