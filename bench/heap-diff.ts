/**
 * Two heap snapshots compared (issue 44: what the ingesting process keeps that a restarted one on the same DATA_DIR
 * does not): self size by constructor, by owner (the nearest class of ours on the shortest path from the GC roots),
 * by owner and field (`LibraryState.catalog`), by owner, field and kind, and the strings that sliced strings are cut
 * from by the owner field holding the slices (count: slices; bytes: their distinct parents), each as A, B and A − B, largest
 * difference first; with `--chunks N`, the differences in bytes a chunk too (bench/lib/heap-snapshot.ts).
 *
 *   node --max-old-space-size=8192 --import tsx bench/heap-diff.ts A.heapsnapshot B.heapsnapshot [--chunks N] [--top 30] [--json out.json]
 *
 * `bench/memory.ts --heap-snapshots PREFIX` writes the pair: PREFIX-ingest (A) and PREFIX-restart (B).
 */
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { readHeapSnapshot, type Tally } from './lib/heap-snapshot.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '30' }, chunks: { type: 'string' }, json: { type: 'string' } } })
const [fileA, fileB] = positionals
if (!fileA || !fileB) throw new Error('usage: heap-diff.ts A.heapsnapshot B.heapsnapshot [--chunks N]')
const top = Number(values.top)
const chunks = values.chunks ? Number(values.chunks) : undefined
const MiB = 2 ** 20
const round = (x: number) => Math.round(x * 10) / 10

type Tables = Record<'by_constructor' | 'by_owner' | 'by_owner_field' | 'by_owner_field_kind' | 'sliced_string_parents_by_owner_field', Map<string, Tally>>
// one snapshot parsed at a time: each is several times its heap while read
async function tablesOf(file: string): Promise<{ tables: Tables; reachable: number }> {
  const heap = await readHeapSnapshot(file)
  return { reachable: heap.reachableBytes, tables: { by_constructor: heap.byKind, by_owner: heap.byOwner, by_owner_field: heap.byOwnerField, by_owner_field_kind: heap.byOwnerFieldKind, sliced_string_parents_by_owner_field: heap.slicedParents } }
}
const a = await tablesOf(fileA)
const b = await tablesOf(fileB)

const diff = (ma: Map<string, Tally>, mb: Map<string, Tally>) =>
  [...new Set([...ma.keys(), ...mb.keys()])]
    .map((k) => {
      const x = ma.get(k) ?? { count: 0, bytes: 0 }
      const y = mb.get(k) ?? { count: 0, bytes: 0 }
      return { key: k, a_mib: round(x.bytes / MiB), b_mib: round(y.bytes / MiB), diff_mib: round((x.bytes - y.bytes) / MiB), a_count: x.count, b_count: y.count, ...(chunks ? { diff_bytes_a_chunk: Math.round((x.bytes - y.bytes) / chunks) } : {}) }
    })
    .sort((p, q) => Math.abs(q.diff_mib) - Math.abs(p.diff_mib))
    .slice(0, top)
const report = {
  a: fileA, b: fileB, chunks,
  reachable_mib: { a: round(a.reachable / MiB), b: round(b.reachable / MiB), diff: round((a.reachable - b.reachable) / MiB), ...(chunks ? { diff_bytes_a_chunk: Math.round((a.reachable - b.reachable) / chunks) } : {}) },
  ...Object.fromEntries((Object.keys(a.tables) as Array<keyof Tables>).map((t) => [t, diff(a.tables[t], b.tables[t])]))
}
if (values.json) await writeFile(values.json, `${JSON.stringify(report, null, 2)}\n`)
console.log(`reachable: A ${report.reachable_mib.a} MiB, B ${report.reachable_mib.b} MiB, A − B ${report.reachable_mib.diff} MiB`)
for (const t of Object.keys(a.tables) as Array<keyof Tables>) {
  console.log(`\n${t.replaceAll('_', ' ')}: A MiB, B MiB, A − B MiB${chunks ? ', bytes a chunk' : ''}, counts`)
  for (const r of (report as unknown as Record<string, ReturnType<typeof diff>>)[t]!) {
    console.log(`${String(r.a_mib).padStart(8)} ${String(r.b_mib).padStart(8)} ${String(r.diff_mib).padStart(8)}${chunks ? String(r.diff_bytes_a_chunk).padStart(7) : ''}  ${r.a_count}/${r.b_count}  ${r.key}`)
  }
}
