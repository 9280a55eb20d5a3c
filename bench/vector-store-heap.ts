/**
 * What the embedded vector store holds, and where (issue 44, item 1): the store alone opened on a copy of a kept
 * DATA_DIR's `vectors` folder (`bench/memory.ts --keep`), every collection of `--namespace` opened (a count), then
 * heap and off-heap after full collections, divided by the folder's chunks, and a heap snapshot of the process for
 * `bench/heap-summary.ts` (what each class of the store holds: payloads, ids, maps).
 *
 *   node --expose-gc --import tsx bench/vector-store-heap.ts --from DATA_DIR [--precision int8|float32] [--snapshot FILE] [--out FILE]
 */
import { cp, readdir, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { writeHeapSnapshot } from 'node:v8'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'

const { values } = parseArgs({
  options: { from: { type: 'string' }, namespace: { type: 'string', default: 'default' }, precision: { type: 'string', default: 'int8' }, snapshot: { type: 'string' }, out: { type: 'string' } }
})
if (!values.from) throw new Error('--from DATA_DIR: a folder kept by bench/memory.ts --keep')
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run under node --expose-gc')
const held = () => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { heap: m.heapUsed, offHeap: m.external }
}
const dir = join(tmpdir(), `vector-store-heap-${process.pid}`)
await cp(join(values.from, 'vectors'), dir, { recursive: true })
const collections = [...new Set((await readdir(dir)).filter((f) => f.endsWith('.snap') || f.endsWith('.log')).map((f) => f.replace(/\.(snap|log)$/, '')))]
const before = held()
const store = new EmbeddedVectorStore({ dir, precision: values.precision as 'int8' | 'float32' })
let chunks = 0
for (const c of collections) {
  const n = await store.count(c, values.namespace).catch(() => 0)
  if (c.endsWith('_chunks')) chunks = n
}
const after = held()
const snapshot = values.snapshot ? writeHeapSnapshot(values.snapshot) : undefined
const report = {
  bench: 'vector-store-heap', at: new Date().toISOString(), from: values.from, precision: values.precision, collections, chunks,
  load_1min: Math.round(loadavg()[0]! * 10) / 10,
  heap_bytes_a_chunk: Math.round((after.heap - before.heap) / chunks), off_heap_bytes_a_chunk: Math.round((after.offHeap - before.offHeap) / chunks),
  ...(snapshot ? { snapshot } : {})
}
await store.close()
await rm(dir, { recursive: true, force: true })
const text = JSON.stringify(report, null, 2)
console.log(text)
if (values.out) await writeFile(values.out, `${text}\n`)
