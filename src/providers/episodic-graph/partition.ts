/**
 * One namespace's episodic graph in memory, in columns (issue 44, item 1). An Episode is one entry: its nodes (the
 * Episode first, then its facets and points) as slots in one array, each node its key list (a shared `Shape`) and then
 * its values; its edges as four slots each, an end being the slot offset of one of its own nodes or, for any other node,
 * that node's id. Strings that repeat across Episodes (types, relationship names, keys, short id suffixes) are held
 * once, and a value equal to an earlier one of the same node (a label's `search_text` and `name`) shares it. A node id
 * `<Episode id>/<rest>` is kept as its suffix and found again through its Episode; others through a map of their own.
 * Reads build the node and edge objects the port returns; `EdgeMemo` hands out one object per edge within a call, as
 * projection dedups edges by identity.
 */
import { lastVersions, type EpisodeGraph, type EpisodicEdge, type EpisodicGraphChange, type EpisodicGraphChangeResult, type EpisodicNode, type GraphFragment } from './port.js'
import { projectNodeset, type InMemoryGraph } from './projection.js'
import type { SnapshotRow } from './snapshot-rows.js'
import type { LoadSteps } from '../embedded/load-steps.js'
import { SharedStrings } from '../embedded/shared-strings.js'

/** The snapshot payload (unchanged by the columns: the same JSON as the objects the store held before). */
export interface Snapshot {
  version: 1
  entities: EpisodicNode[]
  episodes: EpisodeGraph[]
}

/**
 * A node's keys in order, shared by every node of the same keys; `idAt` is where `id` is, `absolute` whether it is kept
 * whole, `packedAt` where a value is held as its UTF-8 bytes (`pack`), or -1.
 */
interface Shape {
  readonly keys: readonly string[]
  readonly idAt: number
  readonly absolute: boolean
  readonly packedAt: number
}

/** Past this many, new strings and shapes are not shared any more (ids' suffixes of imported Episodes could be many). */
const SHARED_LIMIT = 50_000
/** Longest id suffix shared (derived ones are `/f12/p2`): a longer one is most likely an id of its own. */
const SHARED_SUFFIX_LENGTH = 12
const shared = new SharedStrings(SHARED_LIMIT)
const share = (s: string): string => shared.share(s)
const shapes = new Map<string, Shape>()

function shapeOf(keys: readonly string[], absolute: boolean, packedAt: number): Shape {
  const key = `${absolute ? 'a' : 'r'}${packedAt}\u0000${keys.join('\u0000')}`
  const held = shapes.get(key)
  if (held) return held
  const shape: Shape = { keys: keys.map(share), idAt: keys.indexOf('id'), absolute, packedAt }
  if (shapes.size < SHARED_LIMIT) shapes.set(key, shape)
  return shape
}

/**
 * A derived Episode's `evidence` is JSON of chunk and node ids (ASCII) around a few headings (CJK): V8 holds the whole
 * string at two bytes a character, its UTF-8 is about half that. Kept as those bytes in a one-byte string (`latin1`), and
 * decoded on read; only when well formed (no lone surrogate, which UTF-8 cannot carry) and smaller so.
 */
const PACKED_KEY = 'evidence'
const pack = (value: unknown): string | undefined => {
  if (typeof value !== 'string' || !/[^\u0000-\u00ff]/u.test(value) || /[\ud800-\udfff]/u.test(value)) return undefined
  const bytes = Buffer.from(value, 'utf8')
  return bytes.length < 2 * value.length ? bytes.toString('latin1') : undefined
}
const unpack = (value: string): string => Buffer.from(value, 'latin1').toString('utf8')

/**
 * `text` as a slice of `anchor` when `anchor` holds it: a derived FacetPoint's text is a sentence of its Facet's anchor
 * (the chunk's passage, held anyway), and V8 keeps a slice of 13 characters or more as a reference into its parent (about
 * 20 bytes) instead of a copy (two bytes a CJK character). The value is the same string either way.
 */
const LEAST_SLICED_LENGTH = 13
function sliceOf(anchor: string, text: string): string {
  if (text.length < LEAST_SLICED_LENGTH || text.length >= anchor.length) return text
  const start = anchor.indexOf(text)
  return start < 0 ? text : anchor.slice(start, start + text.length)
}

const EDGE_SLOTS = 4
const label = (e: Pick<EpisodicEdge, 'edge_text' | 'relationship_name'>): string => e.edge_text || e.relationship_name

/** One Episode with what it owns, in columns. */
class EpisodeEntry {
  constructor(
    readonly id: string,
    /** When it was written: reads list the edges at a node in the order their Episodes were written. */
    readonly seq: number,
    /** Per node: its `Shape`, then one value per key (`id`: the suffix after the Episode id, or the whole id). */
    readonly slots: unknown[],
    /** Per edge: from, to (a slot offset here, or another node's id), relationship name, edge text. */
    readonly edges: unknown[],
    /** Per edge, when any has one: its `description` (undefined: none). */
    readonly descriptions: Array<string | null | undefined> | undefined
  ) {}

  idAt(offset: number): string {
    const shape = this.slots[offset] as Shape
    const value = this.slots[offset + 1 + shape.idAt] as string
    return shape.absolute ? value : this.id + value
  }

  /** The offset of the node whose id is kept as `suffix`, or -1. */
  relative(suffix: string): number {
    for (let at = 0; at < this.slots.length;) {
      const shape = this.slots[at] as Shape
      if (!shape.absolute && this.slots[at + 1 + shape.idAt] === suffix) return at
      at += 1 + shape.keys.length
    }
    return -1
  }

  absolute(id: string): number {
    for (let at = 0; at < this.slots.length;) {
      const shape = this.slots[at] as Shape
      if (shape.absolute && this.slots[at + 1 + shape.idAt] === id) return at
      at += 1 + shape.keys.length
    }
    return -1
  }

  private valueAt(offset: number, shape: Shape, k: number): unknown {
    const value = this.slots[offset + 1 + k]
    return k === shape.idAt ? this.idAt(offset) : k === shape.packedAt ? unpack(value as string) : value
  }

  value(offset: number, key: string): unknown {
    const shape = this.slots[offset] as Shape
    const k = shape.keys.indexOf(key)
    return k < 0 ? undefined : this.valueAt(offset, shape, k)
  }

  node(offset: number): EpisodicNode {
    const shape = this.slots[offset] as Shape
    const node: Record<string, unknown> = {}
    for (let k = 0; k < shape.keys.length; k++) node[shape.keys[k]!] = this.valueAt(offset, shape, k)
    return node as unknown as EpisodicNode
  }

  /** Offsets of every node, the Episode's first. */
  offsets(): number[] {
    const out: number[] = []
    for (let at = 0; at < this.slots.length; at += 1 + (this.slots[at] as Shape).keys.length) out.push(at)
    return out
  }

  get edgeCount(): number {
    return this.edges.length / EDGE_SLOTS
  }

  endId(end: unknown): string {
    return typeof end === 'number' ? this.idAt(end) : end as string
  }

  /** The stored edge as the port gives it: `relationship_type` is the relationship name, `edge_text` always a key. */
  edge(i: number): EpisodicEdge {
    const at = i * EDGE_SLOTS
    const relationship = this.edges[at + 2] as string
    const edge: EpisodicEdge = {
      from: this.endId(this.edges[at]), to: this.endId(this.edges[at + 1]), relationship_name: relationship,
      edge_text: this.edges[at + 3] as string | null | undefined, relationship_type: relationship
    }
    const description = this.descriptions?.[i]
    if (description !== undefined) edge.description = description
    return edge
  }

  toGraph(): EpisodeGraph {
    const [first, ...rest] = this.offsets()
    return { episode: this.node(first!), nodes: rest.map((at) => this.node(at)), edges: Array.from({ length: this.edgeCount }, (_, i) => this.edge(i)) }
  }
}

/** One edge object per stored edge within a call (projection and its merge dedup edges by identity). */
export class EdgeMemo {
  private readonly made = new Map<EpisodeEntry, EpisodicEdge[]>()

  edge(entry: EpisodeEntry, i: number): EpisodicEdge {
    let list = this.made.get(entry)
    if (!list) this.made.set(entry, (list = []))
    return (list[i] ??= entry.edge(i))
  }
}

/** Where a node is: its Episode and offset, or an entity. */
type Located = { entry: EpisodeEntry; at: number } | { entity: EpisodicNode }

export class EpisodicPartition {
  private readonly episodes = new Map<string, EpisodeEntry>()
  private readonly entities = new Map<string, EpisodicNode>()
  /** Nodes whose id is not `<their Episode id>/…`, by id. */
  private readonly loose = new Map<string, EpisodeEntry>()
  /** Per node id: the Episodes with an edge to it other than its own (always so for an entity), in the order written. */
  private readonly referrers = new Map<string, Set<EpisodeEntry>>()
  private readonly labelUse = new Map<string, number>()
  /** Facet search_text -> the Episode (or Episodes) owning a facet with it. */
  private readonly facetLabels = new Map<string, string | string[]>()
  private seq = 0

  static from(snap: Snapshot): EpisodicPartition {
    const partition = new EpisodicPartition()
    for (const e of snap.entities) partition.putEntity(e)
    for (const ep of snap.episodes) partition.putEpisode(ep)
    return partition
  }

  /** A partition from its snapshot's rows (`snapshot-rows.ts`), each parsed and put as `from` puts it; a step a row (`load-steps.ts`). */
  static *fromRows(rows: Iterable<SnapshotRow>): LoadSteps<EpisodicPartition> {
    const partition = new EpisodicPartition()
    for (const { array, text } of rows) {
      if (array === 'entities') partition.putEntity(JSON.parse(text) as EpisodicNode)
      else partition.putEpisode(JSON.parse(text) as EpisodeGraph)
      yield
    }
    return partition
  }

  /** An Episode as a partition holding it alone gives it back (what a snapshot holds of it: `toSnapshot`). */
  static restored(graph: EpisodeGraph): EpisodeGraph {
    const partition = new EpisodicPartition()
    partition.putEpisode(graph)
    return partition.episodes.get(graph.episode.id)!.toGraph()
  }

  toSnapshot(): Snapshot {
    return { version: 1, entities: [...this.entities.values()], episodes: [...this.episodes.values()].map((e) => e.toGraph()) }
  }

  get empty(): boolean {
    return this.episodes.size === 0 && this.entities.size === 0
  }

  private locate(id: string): Located | undefined {
    const episode = this.episodes.get(id)
    if (episode) return { entry: episode, at: 0 }
    const loose = this.loose.get(id)
    if (loose) return { entry: loose, at: loose.absolute(id) }
    for (let cut = id.lastIndexOf('/'); cut > 0; cut = id.lastIndexOf('/', cut - 1)) {
      const owner = this.episodes.get(id.slice(0, cut))
      const at = owner ? owner.relative(id.slice(cut)) : -1
      if (at >= 0) return { entry: owner!, at }
    }
    const entity = this.entities.get(id)
    return entity ? { entity } : undefined
  }

  has(id: string): boolean {
    return this.locate(id) !== undefined
  }

  node(id: string): EpisodicNode | undefined {
    const found = this.locate(id)
    return !found ? undefined : 'entity' in found ? found.entity : found.entry.node(found.at)
  }

  typeOf(id: string): string | undefined {
    const found = this.locate(id)
    return !found ? undefined : 'entity' in found ? found.entity.type : found.entry.value(found.at, 'type') as string
  }

  /** Every edge at `id`, either direction, each once, in the order their Episodes were written; undefined for none. */
  private incident(id: string, memo: EdgeMemo): EpisodicEdge[] | undefined {
    const found = this.locate(id)
    const own = found && 'entry' in found ? found : undefined
    const others = this.referrers.get(id)
    const entries = [...(others ?? [])]
    if (own) entries.push(own.entry)
    if (entries.length > 1) entries.sort((a, b) => a.seq - b.seq)
    const out: EpisodicEdge[] = []
    for (const entry of entries) {
      const end: unknown = entry === own?.entry ? own.at : id
      for (let i = 0, at = 0; at < entry.edges.length; i++, at += EDGE_SLOTS) {
        if (entry.edges[at] === end || entry.edges[at + 1] === end) out.push(memo.edge(entry, i))
      }
    }
    return out.length > 0 ? out : undefined
  }

  putEntity(node: EpisodicNode): void {
    this.entities.set(node.id, node)
  }

  private putEpisode(given: EpisodeGraph): void {
    const nodes = [given.episode, ...given.nodes]
    const episodeId = given.episode.id
    const prefix = `${episodeId}/`
    let length = 0
    for (const n of nodes) length += 1 + Object.keys(n).length
    const slots = new Array<unknown>(length)
    const offsetOf = new Map<string, number>()
    /** The last anchor_text of a node before this one: a derived Facet's points are sentences of it (`sliceOf`). */
    let anchor: string | undefined
    let at = 0
    for (const n of nodes) {
      const keys = Object.keys(n)
      const absolute = n.id !== episodeId && !n.id.startsWith(prefix)
      const packedAt = keys.indexOf(PACKED_KEY)
      const packed = packedAt < 0 ? undefined : pack((n as unknown as Record<string, unknown>)[PACKED_KEY])
      const shape = shapeOf(keys, absolute, packed === undefined ? -1 : packedAt)
      offsetOf.set(n.id, at)
      slots[at] = shape
      for (let k = 0; k < keys.length; k++) {
        let value = (n as unknown as Record<string, unknown>)[keys[k]!]
        if (k === shape.packedAt) value = packed
        else if (k === shape.idAt) {
          const suffix = (value as string).slice(episodeId.length)
          value = absolute ? value : suffix.length <= SHARED_SUFFIX_LENGTH ? share(suffix) : suffix
        } else if (keys[k] === 'type' && typeof value === 'string') value = share(value)
        else if (typeof value === 'string') {
          // a value equal to an earlier one of this node (a label's search_text and name) is held once
          let earlier = false
          for (let j = 0; j < k; j++) if (slots[at + 1 + j] === value) { value = slots[at + 1 + j]; earlier = true; break }
          if (!earlier && anchor !== undefined) value = sliceOf(anchor, value as string)
        }
        slots[at + 1 + k] = value
      }
      const anchorAt = keys.indexOf('anchor_text')
      if (anchorAt >= 0 && typeof slots[at + 1 + anchorAt] === 'string') anchor = slots[at + 1 + anchorAt] as string
      at += 1 + keys.length
    }
    const edges = new Array<unknown>(given.edges.length * EDGE_SLOTS)
    const withDescription = given.edges.some((e) => e.description !== undefined)
    const descriptions = withDescription ? given.edges.map((e) => e.description) : undefined
    const entry = new EpisodeEntry(episodeId, ++this.seq, slots, edges, descriptions)
    const outside = new Set<string>()
    given.edges.forEach((e, i) => {
      const end = (id: string): unknown => {
        const local = offsetOf.get(id)
        if (local !== undefined) return local
        const held = this.entities.get(id)?.id ?? id
        outside.add(held)
        return held
      }
      edges[i * EDGE_SLOTS] = end(e.from)
      edges[i * EDGE_SLOTS + 1] = end(e.to)
      edges[i * EDGE_SLOTS + 2] = share(e.relationship_name)
      edges[i * EDGE_SLOTS + 3] = e.edge_text
      const l = label(e)
      this.labelUse.set(l, (this.labelUse.get(l) ?? 0) + 1)
    })
    for (const id of outside) {
      const set = this.referrers.get(id)
      if (set) set.add(entry)
      else this.referrers.set(id, new Set([entry]))
    }
    this.episodes.set(episodeId, entry)
    for (const n of given.nodes) {
      if (n.id !== episodeId && !n.id.startsWith(prefix)) this.loose.set(n.id, entry)
      if (n.type === 'Facet' && n.search_text) {
        const text = slots[offsetOf.get(n.id)! + 1 + Object.keys(n).indexOf('search_text')] as string
        const owners = this.facetLabels.get(text)
        if (owners === undefined) this.facetLabels.set(text, entry.id)
        else if (typeof owners === 'string') { if (owners !== entry.id) this.facetLabels.set(text, [owners, entry.id]) }
        else if (!owners.includes(entry.id)) owners.push(entry.id)
      }
    }
  }

  /** Removes an Episode with its nodes and edges; collects the entity ends and labels its edges had and its nodes' ids. */
  private dropEpisode(id: string, entityEnds: Set<string>, labels: Set<string>, removedNodes: Set<string>): void {
    const entry = this.episodes.get(id)
    if (!entry) return
    this.episodes.delete(id)
    for (let i = 0; i < entry.edgeCount; i++) {
      const at = i * EDGE_SLOTS
      for (const end of [entry.edges[at], entry.edges[at + 1]]) {
        if (typeof end !== 'string') continue
        const set = this.referrers.get(end)
        if (set) {
          set.delete(entry)
          if (set.size === 0) this.referrers.delete(end)
        }
        if (this.entities.has(end)) entityEnds.add(end)
      }
      const l = label({ relationship_name: entry.edges[at + 2] as string, edge_text: entry.edges[at + 3] as string | null | undefined })
      labels.add(l)
      const left = (this.labelUse.get(l) ?? 1) - 1
      if (left <= 0) this.labelUse.delete(l)
      else this.labelUse.set(l, left)
    }
    for (const at of entry.offsets().slice(1)) {
      const nodeId = entry.idAt(at)
      removedNodes.add(nodeId)
      if ((entry.slots[at] as Shape).absolute && this.loose.get(nodeId) === entry) this.loose.delete(nodeId)
      const text = entry.value(at, 'search_text')
      if (entry.value(at, 'type') !== 'Facet' || typeof text !== 'string' || !text) continue
      const owners = this.facetLabels.get(text)
      if (owners === id) this.facetLabels.delete(text)
      else if (Array.isArray(owners)) {
        const left = owners.filter((o) => o !== id)
        this.facetLabels.set(text, left.length === 1 ? left[0]! : left)
      }
    }
  }

  /** Throws when the change cannot apply (an edge names a node that will not exist); changes nothing. */
  check(change: EpisodicGraphChange): void {
    const written = lastVersions(change.episodes ?? [])
    const replaced = new Set([...(change.deleteEpisodeIds ?? []), ...written.map((e) => e.episode.id)])
    const goingAway = new Set<string>()
    for (const id of replaced) {
      const entry = this.episodes.get(id)
      if (entry) for (const at of entry.offsets()) goingAway.add(entry.idAt(at))
    }
    const willExist = new Set<string>((change.entities ?? []).map((e) => e.id))
    for (const ep of written) for (const n of [ep.episode, ...ep.nodes]) willExist.add(n.id)
    for (const ep of written) {
      for (const e of ep.edges) {
        for (const end of [e.from, e.to]) {
          if (!willExist.has(end) && !(this.has(end) && !goingAway.has(end))) {
            throw new Error(`edge ${e.from} -[${e.relationship_name}]-> ${e.to}: unknown node ${end}`)
          }
        }
      }
    }
  }

  /** Applies a change in memory; throws before touching anything when an edge names an unknown node. */
  apply(change: EpisodicGraphChange): EpisodicGraphChangeResult {
    this.check(change)
    const written = lastVersions(change.episodes ?? [])
    const newEntities = change.entities ?? []
    const replaced = new Set([...(change.deleteEpisodeIds ?? []), ...written.map((e) => e.episode.id)])
    const existed = new Set([...(change.deleteEpisodeIds ?? [])].filter((id) => this.episodes.has(id)))
    const entityEnds = new Set<string>()
    const labels = new Set<string>()
    const removedNodes = new Set<string>()
    for (const id of replaced) this.dropEpisode(id, entityEnds, labels, removedNodes)
    for (const e of newEntities) this.putEntity(e)
    for (const ep of written) this.putEpisode(ep)

    const writtenIds = new Set(written.map((e) => e.episode.id))
    const writtenEntities = new Set(newEntities.map((e) => e.id))
    const removedEntityIds: string[] = []
    for (const id of [...entityEnds].sort()) {
      if (writtenEntities.has(id) || this.referrers.has(id)) continue
      this.entities.delete(id)
      removedEntityIds.push(id)
    }
    return {
      deletedEpisodeIds: [...existed].filter((id) => !writtenIds.has(id)).sort(),
      removedNodeIds: [...removedNodes].filter((id) => !this.has(id)).sort(),
      removedEntityIds,
      unusedLabels: [...labels].filter((l) => !this.labelUse.has(l)).sort()
    }
  }

  /** The nodes and incident edges as projection reads them; edges are one object each within `memo`. */
  private graph(memo: EdgeMemo): InMemoryGraph {
    return {
      nodes: { has: (id) => this.has(id), get: (id) => this.node(id) },
      incident: { get: (id) => this.incident(id, memo) }
    }
  }

  oneHop(ids: readonly string[], memo = new EdgeMemo()): GraphFragment {
    return projectNodeset(this.graph(memo), ids)
  }

  facetLabelOwners(text: string): string[] | undefined {
    const owners = this.facetLabels.get(text)
    return owners === undefined ? undefined : typeof owners === 'string' ? [owners] : [...owners]
  }

  /** The ids of the Episodes whose mentioned time passes `test`, in the order written. */
  episodesWhere(test: (time: Pick<EpisodicNode, 'mentioned_time_start_ms' | 'mentioned_time_end_ms'>) => boolean): string[] {
    const out: string[] = []
    for (const entry of this.episodes.values()) {
      const time = {
        mentioned_time_start_ms: entry.value(0, 'mentioned_time_start_ms') as number | null | undefined,
        mentioned_time_end_ms: entry.value(0, 'mentioned_time_end_ms') as number | null | undefined
      }
      if (test(time)) out.push(entry.id)
    }
    return out
  }

  countByType(): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const n of this.entities.values()) counts[n.type] = (counts[n.type] ?? 0) + 1
    for (const entry of this.episodes.values()) {
      for (const at of entry.offsets()) {
        const type = entry.value(at, 'type') as string
        counts[type] = (counts[type] ?? 0) + 1
      }
    }
    return counts
  }
}
