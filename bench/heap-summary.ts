/**
 * A heap snapshot (`.heapsnapshot`, from `v8.writeHeapSnapshot` or `bench/memory.ts --heap-snapshot`) summarised
 * without DevTools: self size by constructor, and by owner, where a node's owner is the nearest object on its
 * shortest path from the GC roots whose constructor is a class of ours (not a plain Object, Array, Map, Set or
 * V8's own): what each store or structure holds, strings and arrays included (bench/lib/heap-snapshot.ts).
 *
 *   node --max-old-space-size=16384 --import tsx bench/heap-summary.ts <file.heapsnapshot> [--top 40] [--json out.json]
 *     [--path Constructor]   (the shortest path from the roots to each object of that constructor: what keeps it)
 *     [--under 'Owner.field kind']   (the paths of the first 20 nodes counted under that owner, field and kind)
 *     [--chunks N]   (also by owner, field and kind, each row with its bytes a chunk: what grows with a namespace)
 */
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { readHeapSnapshot, type Tally } from './lib/heap-snapshot.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' }, json: { type: 'string' }, path: { type: 'string' }, under: { type: 'string' }, chunks: { type: 'string' } } })
const file = positionals[0]
if (!file) throw new Error('usage: heap-summary.ts <file.heapsnapshot>')
const top = Number(values.top)

const heap = await readHeapSnapshot(file)
const MiB = 2 ** 20
const chunks = values.chunks ? Number(values.chunks) : undefined
const table = (m: Map<string, Tally>) =>
  [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)
    .map(([k, v]) => ({ kind: k, count: v.count, mib: Math.round(v.bytes / MiB * 10) / 10, ...(chunks ? { bytes_a_chunk: Math.round(v.bytes / chunks) } : {}) }))
const summary = {
  file, nodes: heap.count, reachable_mib: Math.round(heap.reachableBytes / MiB * 10) / 10, unreachable_mib: Math.round(heap.unreachableBytes / MiB * 10) / 10,
  ...(chunks ? { chunks, reachable_bytes_a_chunk: Math.round(heap.reachableBytes / chunks) } : {}),
  by_constructor: table(heap.byKind), by_owner: table(heap.byOwner), ...(chunks ? { by_owner_field_kind: table(heap.byOwnerFieldKind) } : {})
}
if (values.json) await writeFile(values.json, `${JSON.stringify(summary, null, 2)}\n`)
console.log(`${heap.count} nodes, ${summary.reachable_mib} MiB reachable, ${summary.unreachable_mib} MiB unreachable`)
console.log('\nby constructor (self size)')
for (const r of summary.by_constructor) console.log(`${String(r.mib).padStart(9)} MiB ${String(r.count).padStart(10)}  ${r.kind}`)
console.log('\nby owner (nearest class on the shortest path from the roots)')
for (const r of summary.by_owner) console.log(`${String(r.mib).padStart(9)} MiB ${String(r.count).padStart(10)}  ${r.kind}`)
if (summary.by_owner_field_kind) {
  console.log('\nby owner, field and kind (self size, bytes a chunk)')
  for (const r of summary.by_owner_field_kind) console.log(`${String(r.mib).padStart(9)} MiB ${String(r.bytes_a_chunk).padStart(7)} B ${String(r.count).padStart(10)}  ${r.kind}`)
}

if (values.path) {
  console.log(`\npaths from the roots to each ${values.path}`)
  for (const i of heap.nodesOf(values.path)) console.log(`- ${heap.pathTo(i).join(' -> ')}`)
}

if (values.under) {
  console.log(`\npaths from the roots to the first nodes under ${values.under}`)
  for (const i of heap.nodesUnder(values.under, 20)) console.log(`- ${heap.pathTo(i).slice(-8).join(' -> ')}`)
}
