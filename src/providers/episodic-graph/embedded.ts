import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { projectNodeset, projectTwoPhases } from '../../../adapters/episodic/projection.js'
import { BackendUnavailableError, UnexpectedResponseError, probeHealth, type BackendHealth } from '../errors.js'
import type {
  EpisodeGraph, EpisodicEdge, EpisodicGraphChange, EpisodicGraphChangeResult, EpisodicGraphStore, EpisodicNode, GraphFragment,
  ProjectionRequest
} from './port.js'

export interface EmbeddedEpisodicGraphStoreOptions {
  /** JSON snapshot written after every change and read at first use; omit for a purely in-memory store. */
  file?: string
}

interface Snapshot {
  version: 1
  entities: EpisodicNode[]
  episodes: EpisodeGraph[]
}

const label = (e: EpisodicEdge): string => e.edge_text || e.relationship_name

/** In-memory adjacency, optionally persisted as one JSON snapshot (rewritten atomically on every change). */
export class EmbeddedEpisodicGraphStore implements EpisodicGraphStore {
  readonly backend = 'memory' as const
  private readonly nodes = new Map<string, EpisodicNode>()
  private readonly incident = new Map<string, EpisodicEdge[]>()
  private readonly episodes = new Map<string, EpisodeGraph>()
  private readonly entities = new Map<string, EpisodicNode>()
  private readonly labelUse = new Map<string, number>()
  /** Facet search_text -> the Episodes owning a facet with it. */
  private readonly facetLabels = new Map<string, Set<string>>()
  private loaded: Promise<void> | null = null
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: EmbeddedEpisodicGraphStoreOptions = {}) {}

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.options.file) return
      let text: string
      try {
        text = await readFile(this.options.file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
        throw new BackendUnavailableError('episodic-graph:memory', `cannot read ${this.options.file}`, { cause: error })
      }
      let snap: Snapshot
      try {
        snap = JSON.parse(text) as Snapshot
      } catch (error) {
        throw new UnexpectedResponseError('episodic-graph:memory', `corrupt snapshot ${this.options.file}`, { cause: error })
      }
      for (const e of snap.entities) this.putEntity(e)
      for (const ep of snap.episodes) this.putEpisode(ep)
    })()
    return this.loaded
  }

  private putEntity(node: EpisodicNode): void {
    this.entities.set(node.id, node)
    this.nodes.set(node.id, node)
  }

  private addEdge(edge: EpisodicEdge): void {
    for (const id of edge.from === edge.to ? [edge.from] : [edge.from, edge.to]) {
      const list = this.incident.get(id)
      if (list) list.push(edge)
      else this.incident.set(id, [edge])
    }
    this.labelUse.set(label(edge), (this.labelUse.get(label(edge)) ?? 0) + 1)
  }

  private putEpisode(given: EpisodeGraph): void {
    // The stored relationship is the relationship name; set once here so projection never copies edges.
    const ep = { ...given, edges: given.edges.map((e) => ({ ...e, relationship_type: e.relationship_name })) }
    this.episodes.set(ep.episode.id, ep)
    this.nodes.set(ep.episode.id, ep.episode)
    for (const n of ep.nodes) {
      this.nodes.set(n.id, n)
      if (n.type === 'Facet' && n.search_text) {
        const owners = this.facetLabels.get(n.search_text)
        if (owners) owners.add(ep.episode.id)
        else this.facetLabels.set(n.search_text, new Set([ep.episode.id]))
      }
    }
    for (const e of ep.edges) this.addEdge(e)
  }

  /** Removes an Episode with its nodes and edges; returns the entity ends and labels its edges had. */
  private dropEpisode(id: string, entityEnds: Set<string>, labels: Set<string>, removedNodes: Set<string>): void {
    const ep = this.episodes.get(id)
    if (!ep) return
    this.episodes.delete(id)
    for (const edge of ep.edges) {
      for (const end of [edge.from, edge.to]) {
        const list = this.incident.get(end)
        if (!list) continue
        const at = list.indexOf(edge)
        if (at >= 0) list.splice(at, 1)
        if (list.length === 0) this.incident.delete(end)
        if (this.entities.has(end)) entityEnds.add(end)
      }
      const l = label(edge)
      labels.add(l)
      const left = (this.labelUse.get(l) ?? 1) - 1
      if (left <= 0) this.labelUse.delete(l)
      else this.labelUse.set(l, left)
    }
    this.nodes.delete(id)
    for (const n of ep.nodes) {
      this.nodes.delete(n.id)
      removedNodes.add(n.id)
      const owners = n.type === 'Facet' && n.search_text ? this.facetLabels.get(n.search_text) : undefined
      if (owners) {
        owners.delete(id)
        if (owners.size === 0) this.facetLabels.delete(n.search_text!)
      }
    }
  }

  async apply(change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult> {
    const run = this.queue.then(() => this.applyNow(change))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async applyNow(change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult> {
    await this.load()
    const written = change.episodes ?? []
    const newEntities = change.entities ?? []
    // Check every edge end before touching anything, so a bad change leaves the store as it was.
    const replaced = new Set([...(change.deleteEpisodeIds ?? []), ...written.map((e) => e.episode.id)])
    const goingAway = new Set<string>()
    for (const id of replaced) {
      const ep = this.episodes.get(id)
      if (ep) for (const n of [ep.episode, ...ep.nodes]) goingAway.add(n.id)
    }
    const willExist = new Set<string>([...newEntities.map((e) => e.id)])
    for (const ep of written) for (const n of [ep.episode, ...ep.nodes]) willExist.add(n.id)
    for (const ep of written) {
      for (const e of ep.edges) {
        for (const end of [e.from, e.to]) {
          if (!willExist.has(end) && !(this.nodes.has(end) && !goingAway.has(end))) {
            throw new Error(`edge ${e.from} -[${e.relationship_name}]-> ${e.to}: unknown node ${end}`)
          }
        }
      }
    }

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
      if (writtenEntities.has(id) || this.incident.has(id)) continue
      this.entities.delete(id)
      this.nodes.delete(id)
      removedEntityIds.push(id)
    }
    await this.persist()
    return {
      deletedEpisodeIds: [...existed].filter((id) => !writtenIds.has(id)).sort(),
      removedNodeIds: [...removedNodes].filter((id) => !this.nodes.has(id)).sort(),
      removedEntityIds,
      unusedLabels: [...labels].filter((l) => !this.labelUse.has(l)).sort()
    }
  }

  private async persist(): Promise<void> {
    if (!this.options.file) return
    const snap: Snapshot = { version: 1, entities: [...this.entities.values()], episodes: [...this.episodes.values()] }
    const tmp = `${this.options.file}.tmp`
    try {
      await mkdir(dirname(this.options.file), { recursive: true })
      await writeFile(tmp, JSON.stringify(snap))
      await rename(tmp, this.options.file)
    } catch (error) {
      throw new BackendUnavailableError('episodic-graph:memory', `cannot write ${this.options.file}`, { cause: error })
    }
  }

  /** The two phases in process over the shared nodes and edges, which already hold every property. */
  async project(request: ProjectionRequest): Promise<GraphFragment> {
    await this.load()
    return projectTwoPhases(async (ids) => this.oneHop(ids), request)
  }

  async describe(ids: readonly string[]): Promise<GraphFragment> {
    await this.load()
    return this.oneHop(ids)
  }

  private oneHop(ids: readonly string[]): GraphFragment {
    return projectNodeset({ nodes: this.nodes, incident: this.incident }, ids)
  }

  async facetLabelEpisodes(labels: readonly string[]): Promise<Map<string, string[]>> {
    await this.load()
    const out = new Map<string, string[]>()
    for (const label of labels) {
      const owners = this.facetLabels.get(label)
      if (owners) out.set(label, [...owners].sort())
    }
    return out
  }

  async nodeTypes(ids: readonly string[]): Promise<Map<string, string>> {
    await this.load()
    const out = new Map<string, string>()
    for (const id of ids) {
      const n = this.nodes.get(id)
      if (n) out.set(id, n.type)
    }
    return out
  }

  async countByType(): Promise<Record<string, number>> {
    await this.load()
    const counts: Record<string, number> = {}
    for (const n of this.nodes.values()) counts[n.type] = (counts[n.type] ?? 0) + 1
    return counts
  }

  health(): Promise<BackendHealth> {
    return probeHealth('episodic-graph:memory', () => this.load())
  }

  async close(): Promise<void> {
    await this.queue
  }
}
