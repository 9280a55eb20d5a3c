/**
 * A heap snapshot (`.heapsnapshot`, from `v8.writeHeapSnapshot` or `bench/memory.ts --heap-snapshot`) summarised
 * without DevTools: self size by constructor, and by owner, where a node's owner is the nearest object on its
 * shortest path from the GC roots whose constructor is a class of ours (not a plain Object, Array, Map, Set or
 * V8's own): what each store or structure holds, strings and arrays included.
 *
 *   node --max-old-space-size=16384 --import tsx bench/heap-summary.ts <file.heapsnapshot> [--top 40] [--json out.json]
 *     [--path Constructor]   (the shortest path from the roots to each object of that constructor: what keeps it)
 */
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' }, json: { type: 'string' }, path: { type: 'string' } } })
const file = positionals[0]
if (!file) throw new Error('usage: heap-summary.ts <file.heapsnapshot>')
const top = Number(values.top)

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number }
  nodes: number[]
  edges: number[]
  strings: string[]
}
const data = JSON.parse(await readFile(file, 'utf8')) as Snapshot
const { meta } = data.snapshot
const NF = meta.node_fields.length
const EF = meta.edge_fields.length
const nType = meta.node_fields.indexOf('type')
const nName = meta.node_fields.indexOf('name')
const nSelf = meta.node_fields.indexOf('self_size')
const nEdges = meta.node_fields.indexOf('edge_count')
const eType = meta.edge_fields.indexOf('type')
const eTo = meta.edge_fields.indexOf('to_node')
const nodeTypes = meta.node_types[0]
const edgeTypes = meta.edge_types[0]
const weak = edgeTypes.indexOf('weak')
const elementEdge = edgeTypes.indexOf('element')
const hiddenEdge = edgeTypes.indexOf('hidden')
const nameOrIndex = meta.edge_fields.indexOf('name_or_index')
const shortcut = edgeTypes.indexOf('shortcut')
const { nodes, edges, strings } = data
const count = nodes.length / NF

const firstEdge = new Uint32Array(count + 1)
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e
  e += nodes[i * NF + nEdges]! * EF
}
firstEdge[count] = edges.length

const typeOf = (i: number) => nodeTypes[nodes[i * NF + nType]!]!
const nameOf = (i: number) => strings[nodes[i * NF + nName]!]!
const selfOf = (i: number) => nodes[i * NF + nSelf]!
/** What a node is, for the summary: its constructor for objects, else its V8 type (closures by their type too). */
const kindOf = (i: number) => {
  const type = typeOf(i)
  if (type === 'object') return nameOf(i)
  if (type === 'native') return `(native) ${nameOf(i).split(' ')[0]}`
  return `(${type})`
}
const PLAIN = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'Promise', 'Error', 'Uint8Array', 'Float32Array', 'Float64Array', 'Int32Array', 'Uint32Array', 'Uint16Array', 'ArrayBuffer', 'Buffer', 'system / Context', 'Function'])
const isOwner = (i: number) => typeOf(i) === 'object' && /^[A-Z][A-Za-z0-9_]+$/.test(nameOf(i)) && !PLAIN.has(nameOf(i))

// breadth first from the root (node 0) over strong edges: each node's parent on a shortest path
const parent = new Int32Array(count).fill(-1)
parent[0] = 0
let queue = new Uint32Array([0])
while (queue.length > 0) {
  const next: number[] = []
  for (const i of queue) {
    for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF) {
      const t = edges[e + eType]!
      if (t === weak || t === shortcut) continue
      // WeakRef targets read in the current job: kept only until it ends, not by the program
      if (strings[edges[e + nameOrIndex]!] === 'weak_refs_keep_during_job' && t !== elementEdge && t !== hiddenEdge) continue
      const to = edges[e + eTo]! / NF
      if (parent[to] !== -1) continue
      parent[to] = i
      next.push(to)
    }
  }
  queue = Uint32Array.from(next)
}

const byKind = new Map<string, { count: number; bytes: number }>()
const byOwner = new Map<string, { count: number; bytes: number }>()
const add = (m: Map<string, { count: number; bytes: number }>, k: string, bytes: number) => {
  const v = m.get(k) ?? { count: 0, bytes: 0 }
  v.count++
  v.bytes += bytes
  m.set(k, v)
}
const ownerOf = new Int32Array(count).fill(-2)
const findOwner = (i: number): number => {
  const path: number[] = []
  let at = i
  let found = -1
  while (true) {
    if (ownerOf[at] !== -2) { found = ownerOf[at]!; break }
    if (at !== i && isOwner(at)) { found = at; break }
    path.push(at)
    const up = parent[at]!
    if (up === -1 || up === at) break
    at = up
  }
  for (const p of path) ownerOf[p] = found
  return found
}
let total = 0
let unreachable = 0
for (let i = 0; i < count; i++) {
  const bytes = selfOf(i)
  if (parent[i] === -1) { unreachable += bytes; continue }
  total += bytes
  add(byKind, kindOf(i), bytes)
  const owner = isOwner(i) ? i : findOwner(i)
  add(byOwner, owner < 0 ? '(no class on the path)' : nameOf(owner), bytes)
}

const MiB = 2 ** 20
const table = (m: Map<string, { count: number; bytes: number }>) =>
  [...m].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top).map(([k, v]) => ({ kind: k, count: v.count, mib: Math.round(v.bytes / MiB * 10) / 10 }))
const summary = { file, nodes: count, reachable_mib: Math.round(total / MiB * 10) / 10, unreachable_mib: Math.round(unreachable / MiB * 10) / 10, by_constructor: table(byKind), by_owner: table(byOwner) }
if (values.json) await writeFile(values.json, `${JSON.stringify(summary, null, 2)}\n`)
console.log(`${count} nodes, ${summary.reachable_mib} MiB reachable, ${summary.unreachable_mib} MiB unreachable`)
console.log('\nby constructor (self size)')
for (const r of summary.by_constructor) console.log(`${String(r.mib).padStart(9)} MiB ${String(r.count).padStart(10)}  ${r.kind}`)
console.log('\nby owner (nearest class on the shortest path from the roots)')
for (const r of summary.by_owner) console.log(`${String(r.mib).padStart(9)} MiB ${String(r.count).padStart(10)}  ${r.kind}`)

if (values.path) {
  const edgeName = (e: number) => {
    const t = edgeTypes[edges[e + eType]!]!
    const n = edges[e + nameOrIndex]!
    return t === 'element' || t === 'hidden' ? `[${n}]` : strings[n]!
  }
  console.log(`\npaths from the roots to each ${values.path}`)
  for (let i = 0; i < count; i++) {
    if (typeOf(i) !== 'object' || nameOf(i) !== values.path || parent[i] === -1) continue
    const steps: string[] = []
    for (let at = i; at !== 0; at = parent[at]!) {
      const up = parent[at]!
      let via = '?'
      for (let e = firstEdge[up]!; e < firstEdge[up + 1]!; e += EF) if (edges[e + eTo]! / NF === at) { via = edgeName(e); break }
      steps.push(`${kindOf(up)}.${via}`)
    }
    console.log(`- ${steps.reverse().join(' -> ')}`)
  }
}
