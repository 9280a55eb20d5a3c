/**
 * The episodic graph's fold with its snapshot read and written a block at a time (`snapshot-stream.ts`), so that a fold
 * holds the log's changes and the items they touch, not the namespace: the bytes are those `foldEpisodicGraph` writes
 * for the same files (`{"version":1,"entities":[…],"episodes":[…]}`, each row as a partition gives it back).
 *
 * What the whole fold does to the items the log touches is played over those items alone (`LogShares`): an Episode a
 * record writes or deletes leaves its place (a written one goes to the end, as a `Map` re-set after a delete does), and
 * an entity at an edge of a dropped Episode goes when no Episode has an edge to it any more and the record does not
 * write it. Whether an Episode the log does not touch has such an edge is read from the snapshot before the rows are
 * written, in one pass for the entities the log names and, only when a dropped snapshot Episode names others, in a
 * second. Then the rows are written as they are read: an untouched one restored and encoded again, a touched entity as
 * the log leaves it or not at all, and after each array the items the log put in it anew, in the order put.
 *
 * A snapshot in another form (keys in another order) is folded whole, as is a log at least as large as the snapshot
 * (its items are then most of the namespace, held either way, and the whole fold is the faster).
 */
import { foldsWhole } from '../embedded/fold-client.js'
import { BLOCK_BYTES, payloadBlocks, StoredSnapshot, type SnapshotFileWriter, type SnapshotHead } from '../embedded/snapshot-stream.js'
import { foldEpisodicGraph } from './embedded.js'
import { EpisodicPartition } from './partition.js'
import { BETWEEN, HEAD, snapshotRows, type SnapshotRow } from './snapshot-rows.js'
import { lastVersions, type EpisodeGraph, type EpisodicGraphChange, type EpisodicNode } from './port.js'


/** `inBlocks`: `'smaller-log'` (the fold thread's: whole when the log is the larger, `foldsWhole`) or `'always'` (whenever the snapshot is in the form written). */
export function foldEpisodicGraphInBlocks(
  snapshot: SnapshotHead | undefined, log: Iterable<Buffer>, out: SnapshotFileWriter, backend: string,
  { blockBytes = BLOCK_BYTES, inBlocks = 'smaller-log' }: { blockBytes?: number; inBlocks?: 'smaller-log' | 'always' } = {}
): void {
  // this fold holds the log's changes whole (the episodic graph's log is a tenth of the knowledge graph's at 1M)
  const records = [...log]
  const logBytes = records.reduce((sum, record) => sum + record.length, 0)
  if (!snapshot || (inBlocks === 'smaller-log' && foldsWhole({ snapshotBytes: snapshot.payloadBytes, logBytes })) || !startsAsWritten(snapshot, backend)) {
    const payload = snapshot ? Buffer.concat([...payloadBlocks(snapshot, backend, blockBytes)]) : undefined
    out.write(foldEpisodicGraph(payload, records))
    return
  }
  const shares = new LogShares(records.map((record) => JSON.parse(record.toString('utf8')) as EpisodicGraphChange))
  const rowsOf = () => snapshotRows(payloadBlocks(snapshot, backend, blockBytes))
  shares.readSnapshot(rowsOf(), shares.named())
  const more = shares.endsOfDroppedSnapshotEpisodes()
  if (more.size > 0) shares.readSnapshot(rowsOf(), more)
  shares.play()

  const writer = new RowWriter(out)
  writer.text(HEAD.toString('utf8'))
  let section: 'entities' | 'episodes' = 'entities'
  for (const { array, text } of rowsOf()) {
    if (array === 'episodes' && section === 'entities') {
      for (const entity of shares.newEntities()) writer.row(JSON.stringify(entity))
      writer.text(BETWEEN)
      section = 'episodes'
    }
    if (array === 'entities') {
      const entity = JSON.parse(text) as EpisodicNode
      const kept = shares.entityInPlace(entity)
      if (kept) writer.row(JSON.stringify(kept))
    } else {
      const episode = JSON.parse(text) as EpisodeGraph
      if (!shares.touched(episode.episode.id)) writer.row(JSON.stringify(EpisodicPartition.restored(episode)))
    }
  }
  if (section === 'entities') {
    for (const entity of shares.newEntities()) writer.row(JSON.stringify(entity))
    writer.text(BETWEEN)
  }
  for (const episode of shares.newEpisodes()) writer.row(JSON.stringify(EpisodicPartition.restored(episode)))
  writer.text(']}')
  writer.flush()
}

/** When an item was put: its record's index, then its place in that record's list. */
type PutAt = readonly [number, number]
const before = (a: PutAt, b: PutAt) => a[0] - b[0] || a[1] - b[1]

/** An Episode's edge ends that are not its own nodes: the nodes it refers to (`EpisodicPartition`'s referrers). */
function outsideEnds(graph: EpisodeGraph): Set<string> {
  const own = new Set([graph.episode.id, ...graph.nodes.map((n) => n.id)])
  const ends = new Set<string>()
  for (const edge of graph.edges) for (const end of [edge.from, edge.to]) if (!own.has(end)) ends.add(end)
  return ends
}

interface EpisodeState {
  /** The snapshot holds it (until a record drops it). */
  inSnapshot: boolean
  /** Alive now: the token its referrers hold (one per put, as the partition holds one entry object per put). */
  token: number | undefined
  ends: Set<string>
  value: EpisodeGraph | undefined
  putAt: PutAt | undefined
}

interface EntityState {
  inSnapshot: boolean
  exists: boolean
  value: EpisodicNode | undefined
  /** Undefined while it keeps its snapshot place. */
  putAt: PutAt | undefined
}

/**
 * The log's records by item: the Episodes they write or delete and the entities they write or may remove, played over
 * those items alone as `EpisodicPartition.apply` plays them over the namespace.
 */
class LogShares {
  private readonly episodes = new Map<string, EpisodeState>()
  private readonly entities = new Map<string, EntityState>()
  /** Per entity the log concerns: the tokens of the Episodes the log concerns that have an edge to it. */
  private readonly referrers = new Map<string, Set<number>>()
  /** Entities an Episode the log does not touch has an edge to: they never go. */
  private readonly heldByUntouched = new Set<string>()
  private readonly read = new Set<string>()
  private tokens = 0

  constructor(private readonly changes: readonly EpisodicGraphChange[]) {
    for (const change of changes) {
      for (const id of change.deleteEpisodeIds ?? []) this.episode(id)
      for (const graph of change.episodes ?? []) {
        this.episode(graph.episode.id)
        for (const end of outsideEnds(graph)) this.entity(end)
      }
      for (const node of change.entities ?? []) this.entity(node.id)
    }
  }

  touched(id: string): boolean {
    return this.episodes.has(id)
  }

  /** The ids the records name that may be entities. */
  named(): Set<string> {
    return new Set(this.entities.keys())
  }

  /**
   * One pass over the snapshot's rows for the entities `ids`: their rows, and whether an Episode the log does not touch
   * refers to them; on the first pass also the Episodes the log touches, as the snapshot holds them.
   */
  readSnapshot(rows: Iterable<SnapshotRow>, ids: ReadonlySet<string>): void {
    const first = this.read.size === 0
    for (const id of ids) this.read.add(id)
    for (const { array, text } of rows) {
      if (array === 'entities') {
        const entity = JSON.parse(text) as EpisodicNode
        if (ids.has(entity.id)) Object.assign(this.entity(entity.id), { inSnapshot: true, exists: true, value: entity })
        continue
      }
      const graph = JSON.parse(text) as EpisodeGraph
      const held = this.episodes.get(graph.episode.id)
      if (!held) {
        for (const end of outsideEnds(graph)) if (ids.has(end)) this.heldByUntouched.add(end)
      } else if (first) {
        Object.assign(held, { inSnapshot: true, token: ++this.tokens, ends: outsideEnds(graph) })
        for (const end of held.ends) this.refer(end, held.token!)
      }
    }
  }

  /** The ends of the snapshot's Episodes the log drops that the first pass did not read. */
  endsOfDroppedSnapshotEpisodes(): Set<string> {
    const out = new Set<string>()
    for (const state of this.episodes.values()) if (state.inSnapshot) for (const end of state.ends) if (!this.read.has(end)) out.add(end)
    for (const end of out) this.entity(end)
    return out
  }

  /** Applies the records in order to the items they concern. */
  play(): void {
    this.changes.forEach((change, at) => {
      const written = lastVersions(change.episodes ?? [])
      const entityEnds = new Set<string>()
      for (const id of new Set([...(change.deleteEpisodeIds ?? []), ...written.map((g) => g.episode.id)])) {
        const state = this.episodes.get(id)!
        if (state.token === undefined) continue
        for (const end of state.ends) {
          this.referrers.get(end)?.delete(state.token)
          if (this.entities.get(end)?.exists) entityEnds.add(end)
        }
        Object.assign(state, { token: undefined, ends: new Set(), value: undefined, putAt: undefined })
      }
      ;(change.entities ?? []).forEach((node, i) => {
        const state = this.entities.get(node.id)!
        if (!state.exists) Object.assign(state, { exists: true, putAt: [at, i] })
        state.value = node
      })
      written.forEach((graph, i) => {
        const state = this.episodes.get(graph.episode.id)!
        state.putAt = [at, i]
        state.token = ++this.tokens
        state.ends = outsideEnds(graph)
        state.value = graph
        for (const end of state.ends) this.refer(end, state.token)
      })
      const writtenEntities = new Set((change.entities ?? []).map((e) => e.id))
      for (const id of entityEnds) {
        if (writtenEntities.has(id) || this.heldByUntouched.has(id) || (this.referrers.get(id)?.size ?? 0) > 0) continue
        Object.assign(this.entities.get(id)!, { exists: false, value: undefined, putAt: undefined })
      }
    })
  }

  /** A snapshot entity as the log leaves it in its place: its row's value, the last written, or none (gone or moved). */
  entityInPlace(row: EpisodicNode): EpisodicNode | undefined {
    const state = this.entities.get(row.id)
    if (!state) return row
    return state.exists && state.putAt === undefined ? state.value : undefined
  }

  /** The entities the log put anew (or again after they went), in the order put. */
  newEntities(): EpisodicNode[] {
    const put = [...this.entities.values()].filter((s) => s.exists && s.putAt !== undefined)
    return put.sort((a, b) => before(a.putAt!, b.putAt!)).map((s) => s.value!)
  }

  /** The Episodes the log wrote that are there at its end, in the order put. */
  newEpisodes(): EpisodeGraph[] {
    const put = [...this.episodes.values()].filter((s) => s.value !== undefined)
    return put.sort((a, b) => before(a.putAt!, b.putAt!)).map((s) => s.value!)
  }

  private episode(id: string): EpisodeState {
    let state = this.episodes.get(id)
    if (!state) this.episodes.set(id, (state = { inSnapshot: false, token: undefined, ends: new Set(), value: undefined, putAt: undefined }))
    return state
  }

  private entity(id: string): EntityState {
    let state = this.entities.get(id)
    if (!state) this.entities.set(id, (state = { inSnapshot: false, exists: false, value: undefined, putAt: undefined }))
    return state
  }

  private refer(end: string, token: number): void {
    const set = this.referrers.get(end)
    if (set) set.add(token)
    else this.referrers.set(end, new Set([token]))
  }
}

function startsAsWritten(snapshot: SnapshotHead, backend: string): boolean {
  return new StoredSnapshot(snapshot, backend).startsWith(HEAD)
}

/** Rows joined by commas within each array, written in pieces of about a block. */
class RowWriter {
  private pending: string[] = []
  private pendingLength = 0
  private first = true

  constructor(private readonly out: SnapshotFileWriter) {}

  text(text: string): void {
    this.push(text)
    this.first = true
  }

  row(json: string): void {
    this.push(this.first ? json : `,${json}`)
    this.first = false
  }

  flush(): void {
    if (this.pending.length > 0) this.out.write(Buffer.from(this.pending.join(''), 'utf8'))
    this.pending = []
    this.pendingLength = 0
  }

  private push(text: string): void {
    this.pending.push(text)
    this.pendingLength += text.length
    if (this.pendingLength >= BLOCK_BYTES / 4) this.flush()
  }
}
