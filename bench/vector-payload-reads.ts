/**
 * What a search that answers payloads costs when the payloads stay in the snapshot's file (issue 44, item 1): the
 * embedded vector store of this tree and of `--base DIR` (another tree's sources), each opened on its own copy of a kept
 * DATA_DIR's `vectors` folder (`bench/memory.ts --keep`), int8; the same queries (the stored vectors of `--queries`
 * records drawn at random, each a little moved so that it is not its own hit) searched in the chunk collection at limit
 * 10 and 50, with payloads, the tree alternating query by query; time per search p50 and p99 each, and this ÷ base.
 * Also a metadata-filtered search (every payload read) and a document's scroll, fewer times.
 *
 *   nice -n 19 node --expose-gc --import tsx bench/vector-payload-reads.ts --from DATA_DIR --base DIR [--queries 400] [--out FILE]
 */
import { cp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { rng } from './lib/synthetic.js'

const { values } = parseArgs({
  options: { from: { type: 'string' }, base: { type: 'string' }, queries: { type: 'string', default: '400' }, collection: { type: 'string', default: 'recall_chunks' }, out: { type: 'string' } }
})
if (!values.from || !values.base) throw new Error('--from DATA_DIR --base DIR')
const collection = values.collection
const queries = Number(values.queries)

type Store = { search(c: string, ns: string, v: Float32Array, limit: number, filter?: unknown): Promise<unknown[]>; scroll(c: string, ns: string, docIds?: string[]): AsyncIterable<unknown>; vectorsOf(c: string, ns: string, ids: string[]): Promise<Map<string, Float32Array>>; close(): Promise<void> }
async function open(tree: string, name: string): Promise<{ name: string; store: Store; dir: string }> {
  const { EmbeddedVectorStore } = (await import(pathToFileURL(join(resolve(tree), 'src/providers/vector-store/embedded.ts')).href)) as { EmbeddedVectorStore: new (o: unknown) => Store }
  const dir = join(tmpdir(), `vector-payload-reads-${name}-${process.pid}`)
  await cp(join(values.from!, 'vectors'), dir, { recursive: true })
  return { name, store: new EmbeddedVectorStore({ dir, precision: 'int8' }), dir }
}
const arms = [await open(values.base, 'base'), await open('.', 'this')]

// query vectors: stored chunk vectors, moved a little; ids taken by a scroll of the first arm
const ids: string[] = []
const docs: string[] = []
for await (const row of arms[0]!.store.scroll(collection, 'default') as AsyncIterable<{ id: string; payload: { doc_id: string } }>) {
  ids.push(row.id)
  docs.push(row.payload.doc_id)
}
const random = rng(44)
const picked = Array.from({ length: queries }, () => ids[Math.floor(random() * ids.length)]!)
const stored = await arms[0]!.store.vectorsOf(collection, 'default', picked)
const vectors = picked.map((id) => Float32Array.from(stored.get(id)!, (x) => x + (random() - 0.5) * 0.02))
// each store's first search opens the partition: not timed
for (const arm of arms) await arm.store.search(collection, 'default', vectors[0]!, 1)

const times = new Map<string, number[]>()
const time = async (key: string, run: () => Promise<unknown>): Promise<void> => {
  const t = performance.now()
  await run()
  const ms = performance.now() - t
  times.set(key, [...(times.get(key) ?? []), ms])
}
for (let q = 0; q < queries; q++) {
  const order = q % 2 === 0 ? arms : [...arms].reverse()
  for (const limit of [10, 50]) for (const arm of order) await time(`${arm.name} search ${limit}`, () => arm.store.search(collection, 'default', vectors[q]!, limit))
  if (q % 20 === 0) {
    for (const arm of order) await time(`${arm.name} filtered search 10`, () => arm.store.search(collection, 'default', vectors[q]!, 10, { metadata: [{ key: 'no_such_key', equals: 'x' }] }))
    const doc = docs[Math.floor(random() * docs.length)]!
    for (const arm of order) await time(`${arm.name} scroll of a document`, async () => {
      for await (const _ of arm.store.scroll(collection, 'default', [doc])) void _
    })
  }
}
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d
const rows: Record<string, unknown> = {}
for (const what of ['search 10', 'search 50', 'filtered search 10', 'scroll of a document']) {
  const b = times.get(`base ${what}`)!
  const t = times.get(`this ${what}`)!
  rows[what] = { n: t.length, base_p50_ms: round(pct(b, 0.5)), this_p50_ms: round(pct(t, 0.5)), p50_ratio: round(pct(t, 0.5) / pct(b, 0.5), 2), base_p99_ms: round(pct(b, 0.99)), this_p99_ms: round(pct(t, 0.99)), p99_ratio: round(pct(t, 0.99) / pct(b, 0.99), 2) }
}
for (const arm of arms) {
  await arm.store.close()
  await rm(arm.dir, { recursive: true, force: true })
}
const report = { bench: 'vector-payload-reads', at: new Date().toISOString(), from: values.from, base: values.base, collection, records: ids.length, queries, load_1min: round(loadavg()[0]!, 1), results: rows }
const text = JSON.stringify(report, null, 2)
console.log(text)
if (values.out) await writeFile(values.out, `${text}\n`)
