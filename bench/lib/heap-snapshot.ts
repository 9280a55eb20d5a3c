/**
 * A V8 heap snapshot (`.heapsnapshot`) read without DevTools, for bench/heap-summary.ts and bench/heap-diff.ts: each
 * reachable node's parent on a shortest strong path from the GC roots, its kind (constructor, or V8 type for strings,
 * closures and code), and its owner: the nearest object on that path whose constructor is a class of ours (not a plain
 * Object, Array, Map, Set or V8's own), with the field of the owner the path leaves it by (`LibraryState.catalog`).
 */
import { readFile } from 'node:fs/promises'

interface SnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number }
  nodes: number[]
  edges: number[]
  strings: string[]
}

export interface Tally { count: number; bytes: number }

export interface HeapSnapshot {
  count: number
  reachableBytes: number
  unreachableBytes: number
  /** Self size by kind. */
  byKind: Map<string, Tally>
  /** Self size by owner class. */
  byOwner: Map<string, Tally>
  /** Self size by owner class and the field its path leaves the owner by. */
  byOwnerField: Map<string, Tally>
  /** Self size by owner field and kind: which structures hold which strings, arrays, objects. */
  byOwnerFieldKind: Map<string, Tally>
  /**
   * Sliced strings by the owner field that holds them, with the bytes of the distinct strings they are cut from
   * (V8 keeps the whole parent alive for a slice of 13 characters or more): what a store keeping substrings costs.
   */
  slicedParents: Map<string, Tally>
  kindOf(i: number): string
  /** The shortest path from the roots to node `i`, one `Kind.edge` a step. */
  pathTo(i: number): string[]
  /** Nodes of one constructor. */
  nodesOf(constructor: string): number[]
  /** Nodes counted under one key of `byOwnerFieldKind` (`LibraryState.catalog (array)`), up to `limit`. */
  nodesUnder(key: string, limit: number): number[]
}

const PLAIN = new Set(['Object', 'Array', 'Map', 'Set', 'WeakMap', 'Promise', 'Error', 'Uint8Array', 'Float32Array', 'Float64Array', 'Int32Array', 'Uint32Array', 'Uint16Array', 'ArrayBuffer', 'Buffer', 'system / Context', 'Function'])

export async function readHeapSnapshot(file: string): Promise<HeapSnapshot> {
  const data = JSON.parse(await readFile(file, 'utf8')) as SnapshotFile
  const { meta } = data.snapshot
  const NF = meta.node_fields.length
  const EF = meta.edge_fields.length
  const nType = meta.node_fields.indexOf('type')
  const nName = meta.node_fields.indexOf('name')
  const nSelf = meta.node_fields.indexOf('self_size')
  const nEdges = meta.node_fields.indexOf('edge_count')
  const eType = meta.edge_fields.indexOf('type')
  const eTo = meta.edge_fields.indexOf('to_node')
  const nameOrIndex = meta.edge_fields.indexOf('name_or_index')
  const nodeTypes = meta.node_types[0]
  const edgeTypes = meta.edge_types[0]
  const weak = edgeTypes.indexOf('weak')
  const elementEdge = edgeTypes.indexOf('element')
  const hiddenEdge = edgeTypes.indexOf('hidden')
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
  const kindOf = (i: number) => {
    const type = typeOf(i)
    if (type === 'object') return nameOf(i)
    if (type === 'native') return `(native) ${nameOf(i).split(' ')[0]}`
    return `(${type})`
  }
  const isOwner = (i: number) => typeOf(i) === 'object' && /^[A-Z][A-Za-z0-9_]+$/.test(nameOf(i)) && !PLAIN.has(nameOf(i))
  const edgeName = (e: number) => {
    const t = edgeTypes[edges[e + eType]!]!
    const n = edges[e + nameOrIndex]!
    return t === 'element' || t === 'hidden' ? `[${n}]` : strings[n]!
  }

  // breadth first from the root (node 0) over strong edges: each node's parent on a shortest path, and the edge to it
  const parent = new Int32Array(count).fill(-1)
  const viaEdge = new Int32Array(count).fill(-1)
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
        viaEdge[to] = e
        next.push(to)
      }
    }
    queue = Uint32Array.from(next)
  }

  // owner of each node, and the field by which its path leaves the owner (a named edge; element edges read `[]`)
  const ownerOf = new Int32Array(count).fill(-2)
  const fieldOf = new Int32Array(count).fill(-1)
  const resolve = (i: number): void => {
    const path: number[] = []
    let at = i
    let owner = -1
    let field = -1
    while (true) {
      if (at !== i && ownerOf[at] !== -2) { owner = ownerOf[at]!; field = fieldOf[at]!; break }
      if (at !== i && isOwner(at)) { owner = at; field = viaEdge[path[path.length - 1]!]!; break }
      path.push(at)
      const up = parent[at]!
      if (up === -1 || up === at) break
      at = up
    }
    for (const p of path) { ownerOf[p] = owner; fieldOf[p] = field }
  }
  const add = (m: Map<string, Tally>, k: string, bytes: number) => {
    const v = m.get(k)
    if (v) { v.count++; v.bytes += bytes } else m.set(k, { count: 1, bytes })
  }
  const byKind = new Map<string, Tally>()
  const byOwner = new Map<string, Tally>()
  const byOwnerField = new Map<string, Tally>()
  const byOwnerFieldKind = new Map<string, Tally>()
  // an object of one of our classes counts as its own owner (its own fields are `(self)`)
  const keyOf = (i: number): [string, string] => {
    if (isOwner(i)) return [nameOf(i), '(self)']
    const owner = ownerOf[i]!
    const field = fieldOf[i]! >= 0 ? edgeName(fieldOf[i]!).replace(/^\[\d+\]$/, '[]') : ''
    return [owner < 0 ? '(no class on the path)' : nameOf(owner), field]
  }
  const slicedParents = new Map<string, Tally>()
  const parentSeen = new Set<number>()
  const sliced = nodeTypes.indexOf('sliced string')
  let reachableBytes = 0
  let unreachableBytes = 0
  for (let i = 0; i < count; i++) {
    const bytes = selfOf(i)
    if (parent[i] === -1) { unreachableBytes += bytes; continue }
    reachableBytes += bytes
    const kind = kindOf(i)
    add(byKind, kind, bytes)
    if (ownerOf[i] === -2) resolve(i)
    const [ownerName, field] = keyOf(i)
    add(byOwner, ownerName, bytes)
    add(byOwnerField, `${ownerName}.${field}`, bytes)
    add(byOwnerFieldKind, `${ownerName}.${field} ${kind}`, bytes)
    if (nodes[i * NF + nType] === sliced) {
      for (let e = firstEdge[i]!; e < firstEdge[i + 1]!; e += EF) {
        if (strings[edges[e + nameOrIndex]!] !== 'parent') continue
        const to = edges[e + eTo]! / NF
        const fresh = !parentSeen.has(to)
        parentSeen.add(to)
        const v = slicedParents.get(`${ownerName}.${field}`) ?? { count: 0, bytes: 0 }
        v.count++
        if (fresh) v.bytes += selfOf(to)
        slicedParents.set(`${ownerName}.${field}`, v)
      }
    }
  }

  return {
    count, reachableBytes, unreachableBytes, byKind, byOwner, byOwnerField, byOwnerFieldKind, slicedParents, kindOf,
    pathTo(i) {
      const steps: string[] = []
      for (let at = i; at !== 0 && parent[at]! >= 0; at = parent[at]!) steps.push(`${kindOf(parent[at]!)}.${edgeName(viaEdge[at]!)}`)
      return steps.reverse()
    },
    nodesUnder(key, limit) {
      const out: number[] = []
      for (let i = 0; i < count && out.length < limit; i++) {
        if (parent[i] === -1) continue
        const [ownerName, field] = keyOf(i)
        if (`${ownerName}.${field} ${kindOf(i)}` === key) out.push(i)
      }
      return out
    },
    nodesOf(constructor) {
      const out: number[] = []
      for (let i = 0; i < count; i++) if (typeOf(i) === 'object' && nameOf(i) === constructor && parent[i] !== -1) out.push(i)
      return out
    }
  }
}
