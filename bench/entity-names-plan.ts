/**
 * The entity-names run alone over a namespace of many entities (issue 44 item 1: at 1M chunks the derived graph held
 * 138,820 entities, and each run read them all): one embedded knowledge graph and one embedded vector store of this
 * tree, `--entities` imported entities (a name and, for a third of them, an alias; texts drawn at random, so nearly
 * all distinct), their entity collection filled first. Then rounds: a graph write renaming `--touched` entities, and
 * the entity-names run after it, alternately by `--base`'s applier (the whole reconcile: every name read, hashed, the
 * whole collection scrolled) and by this tree's (the touched entities' names only, with the ledger). Both appliers
 * reach the same stores, so the difference is the reconcile's own. Stand-in vectors (no model runs).
 *
 *   node --max-old-space-size=2048 --import tsx bench/entity-names-plan.ts --base DIR [--entities 15000,140000] [--touched 300] [--rounds 10]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { applyEntityNames } from '../src/corpus/appliers/entity-names.js'
import { EntityNameLedger } from '../src/corpus/entity-name-ledger.js'
import { EntityNameFailures } from '../src/corpus/entity-vectors.js'
import { exclusiveOf, InProcessWriteLock } from '../src/corpus/write-lock.js'
import { EmbeddedKnowledgeGraphStore } from '../src/providers/knowledge-graph/embedded.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { rng, standInEmbedder } from './lib/synthetic.js'

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' }, entities: { type: 'string', default: '15000,140000' }, touched: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '10' }, out: { type: 'string', default: 'bench/results/entity-names-plan.json' }
  }
})
if (!args.base) throw new Error('--base DIR: the tree whose applier is compared')
const base = await import(pathToFileURL(join(args.base, 'src/corpus/appliers/entity-names.ts')).href) as { applyEntityNames: typeof applyEntityNames }
const TOUCHED = Number(args.touched)
const ROUNDS = Number(args.rounds)
const NAMESPACE = 'default'
const COLLECTION = 'recall_entity_names'
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const random = rng(44)
const HAN = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞'
const text = (length: number) => Array.from({ length }, () => HAN[Math.floor(random() * HAN.length)]).join('')
const entityAt = (i: number, generation: number) => ({
  id: `e${String(i).padStart(7, '0')}`, name: `${text(3)}${generation}`, aliases: i % 3 === 0 ? [text(4)] : [], source_chunk_ids: []
})

const results: Record<string, unknown>[] = []
for (const size of args.entities!.split(',').map(Number)) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-names-plan-'))
  const graph = new EmbeddedKnowledgeGraphStore()
  const vectors = new EmbeddedVectorStore({ dir })
  const ports = { graph, vectors, embedder: standInEmbedder }
  const options = () => ({ collection: COLLECTION, failures: new EntityNameFailures(), exclusive: exclusiveOf(new InProcessWriteLock(), `entities:${NAMESPACE}`) })
  for (let at = 0; at < size; at += 5000) await graph.upsert(NAMESPACE, { entities: Array.from({ length: Math.min(5000, size - at) }, (_, k) => entityAt(at + k, 0)) })
  const ledger = new EntityNameLedger()
  // the first run of this tree's applier is the whole reconcile: it fills the collection and the ledger
  const filled = await applyEntityNames(ports, NAMESPACE, { ...options(), ledger })
  log(`${size} entities: ${filled.embedded} names embedded; load ${round(loadavg()[0]!)}`)
  const runs: Record<'base' | 'this', Array<{ wall_ms: number; cpu_ms: number; embedded: number; removed: number }>> = { base: [], this: [] }
  const loadBefore = loadavg()[0]!
  for (let r = 0; r < ROUNDS; r++) {
    for (const arm of (r % 2 === 0 ? ['base', 'this'] : ['this', 'base']) as Array<'base' | 'this'>) {
      // a write renaming TOUCHED entities spread over the namespace
      const ids = Array.from({ length: TOUCHED }, () => Math.floor(random() * size))
      const write = [...new Set(ids)].map((i) => entityAt(i, r * 2 + (arm === 'base' ? 1 : 2)))
      await graph.upsert(NAMESPACE, { entities: write })
      ledger.touch(NAMESPACE, write.map((e) => e.id))
      const wall = performance.now()
      const cpu = cpuMs()
      const done = arm === 'base' ? await base.applyEntityNames(ports, NAMESPACE, options()) : await applyEntityNames(ports, NAMESPACE, { ...options(), ledger })
      runs[arm].push({ wall_ms: performance.now() - wall, cpu_ms: cpuMs() - cpu, ...done })
    }
  }
  // after the base runs the ledger still holds what this tree's runs left; the collection must equal the graph's names either way
  const check = await base.applyEntityNames(ports, NAMESPACE, options())
  const summary = (arm: 'base' | 'this') => ({
    run_wall_ms: round(median(runs[arm].map((x) => x.wall_ms))), run_cpu_ms: round(median(runs[arm].map((x) => x.cpu_ms))),
    each_cpu_ms: runs[arm].map((x) => round(x.cpu_ms)), embedded_median: median(runs[arm].map((x) => x.embedded)), removed_median: median(runs[arm].map((x) => x.removed))
  })
  const point = {
    entities: size, names: filled.embedded, touched_per_write: TOUCHED, load_1m: [round(loadBefore), round(loadavg()[0]!)],
    base: summary('base'), this: summary('this'), whole_reconcile_after: check,
    ratio_this_to_base: { run_wall: round(summary('this').run_wall_ms / summary('base').run_wall_ms, 3), run_cpu: round(summary('this').run_cpu_ms / summary('base').run_cpu_ms, 3) }
  }
  log(JSON.stringify(point))
  results.push(point)
  await vectors.close()
  await graph.close()
  await rm(dir, { recursive: true, force: true })
}
await writeFile(args.out!, `${JSON.stringify({
  generated_by: 'bench/entity-names-plan.ts', at: new Date().toISOString(), machine: { cpus: cpus().length, node: process.version },
  base: args.base, rounds: ROUNDS, sizes: results
}, null, 2)}\n`)
