/**
 * A vector partition's records without their vectors (issue 44, item 1): the heap a partition holds a record for (its id,
 * its number by id, its document's records) and the time of its record operations, this tree beside another
 * (`--base DIR`, a checkout with its node_modules) in one run, trees in turns, each round in a new process. Records shaped
 * as derived Episodes' (`d:ep:<doc>/fN/pM`, 16 a document) and as chunks (`<doc>#n`, 8 a document); payloads `{doc_id,
 * text}` with one shared text, vectors 8 dimensions from 64 distinct rows, so that ids and their indexes are most of the
 * heap measured.
 *
 *   node --expose-gc --import tsx bench/vector-records.ts --records 200000 --base DIR [--rounds 3] [--out FILE]
 *
 * Per tree and round: heap bytes a record after the upserts (after `gc()`, less the heap before), upsert, lookup by id
 * (every record once, in a scattered order), 50 searches of limit 50, and deletes of every third document, in ms.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' }, base: { type: 'string' }, rounds: { type: 'string', default: '3' },
    out: { type: 'string' }, child: { type: 'string' }, shape: { type: 'string', default: 'episodes' }
  }
})
const RECORDS = Number(args.records)
const DIMS = 8

interface Result { heap_bytes_a_record: number; upsert_ms: number; lookup_ms: number; search_ms: number; delete_docs_ms: number }

async function measure(tree: string, shape: string): Promise<Result> {
  const url = (path: string) => pathToFileURL(resolve(tree, path)).href
  const { Collection } = await import(url('src/providers/vector-store/matrix.ts'))
  const { RowPool } = await import(url('src/providers/vector-store/row-pool.ts'))
  const vectors = new Float32Array(DIMS * 64)
  for (let r = 0; r < 64; r++) {
    let norm = 0
    for (let d = 0; d < DIMS; d++) norm += (vectors[r * DIMS + d] = Math.sin(r * 7.1 + d * 1.3)) ** 2
    for (let d = 0; d < DIMS; d++) vectors[r * DIMS + d]! /= Math.sqrt(norm)
  }
  const perDoc = shape === 'chunks' ? 8 : 16
  const docOf = (i: number) => (shape === 'chunks' ? `mem-${String(Math.floor(i / perDoc)).padStart(7, '0')}` : `d:ep:mem-${String(Math.floor(i / perDoc)).padStart(7, '0')}`)
  const idOf = (i: number) => (shape === 'chunks' ? `${docOf(i)}#${i % perDoc}` : `${docOf(i)}/f${(i >> 1) & 7}/p${i & 1}`)
  const text = 'x'.repeat(40)
  const gc = globalThis.gc!
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  const c = new Collection(DIMS, new RowPool(DIMS, 1024))
  let t = performance.now()
  for (let i = 0; i < RECORDS; i++) c.upsert(idOf(i), { doc_id: docOf(i), text }, vectors, (i & 63) * DIMS)
  const upsert = performance.now() - t
  gc()
  const heap = process.memoryUsage().heapUsed - heapBefore
  t = performance.now()
  let found = 0
  for (let i = 0; i < RECORDS; i++) {
    const id = idOf((i * 7919) % RECORDS)
    if (c.rowOf ? c.rowOf.get(id) !== undefined : c.ids.indexOf(id) >= 0) found++
  }
  const lookup = performance.now() - t
  if (found !== RECORDS) throw new Error(`found ${found} of ${RECORDS}`)
  t = performance.now()
  for (let q = 0; q < 50; q++) c.search(vectors.subarray((q & 63) * DIMS, (q & 63) * DIMS + DIMS), 50)
  const search = performance.now() - t
  t = performance.now()
  for (let d = 0; d < RECORDS / perDoc; d += 3) c.deleteDoc(docOf(d * perDoc))
  const deletes = performance.now() - t
  return { heap_bytes_a_record: Math.round(heap / RECORDS), upsert_ms: Math.round(upsert), lookup_ms: Math.round(lookup), search_ms: Math.round(search), delete_docs_ms: Math.round(deletes) }
}

if (args.child) {
  process.stdout.write(JSON.stringify(await measure(args.child, args.shape!)))
} else {
  const trees: Record<string, string> = { this: '.', ...(args.base ? { base: args.base } : {}) }
  const out: Record<string, Record<string, Result[]>> = {}
  for (const shape of ['episodes', 'chunks']) {
    out[shape] = {}
    for (let round = 0; round < Number(args.rounds); round++) {
      const order = round % 2 === 0 ? Object.keys(trees) : Object.keys(trees).reverse()
      for (const name of order) {
        const json = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/vector-records.ts', '--child', trees[name]!, '--records', String(RECORDS), '--shape', shape], { encoding: 'utf8' })
        ;(out[shape]![name] ??= []).push(JSON.parse(json) as Result)
        console.log(shape, name, json)
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const ratios = args.base
    ? Object.fromEntries(Object.entries(out).map(([shape, byTree]) => [shape, Object.fromEntries(Object.keys(byTree['this']![0]!).map((k) => [
        k, Math.round(1000 * median(byTree['this']!.map((r) => r[k as keyof Result])) / median(byTree['base']!.map((r) => r[k as keyof Result]))) / 1000
      ]))]))
    : undefined
  const result = { generated_by: 'bench/vector-records.ts', at: new Date().toISOString(), records: RECORDS, base: args.base, runs: out, this_over_base_medians: ratios }
  console.log(JSON.stringify(ratios))
  if (args.out) writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`)
}
