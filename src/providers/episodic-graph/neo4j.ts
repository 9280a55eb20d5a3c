import { int, type Integer, type ManagedTransaction } from 'neo4j-driver'
import { createNeo4jConnection, type Neo4jConnection, type Neo4jConnectionOptions } from '../neo4j/connection.js'
import { backendName, type BackendHealth } from '../errors.js'
import { checkNamespace } from '../namespace.js'
import {
  EPISODIC_RELATIONSHIPS, lastVersions, type EpisodicEdge, type EpisodicGraphChange, type EpisodicGraphChangeResult, type EpisodicGraphStore,
  type EpisodicNode, type GraphFragment, type ProjectionRequest, type TimeRangeMs
} from './port.js'
import { OTHER_TYPE_PRIORITY, relevantIds, TYPE_PRIORITY } from './projection.js'

export interface Neo4jEpisodicGraphStoreOptions {
  /** A shared connection (closed by its owner), or the options to open one this store owns. */
  connection: Neo4jConnection | Neo4jConnectionOptions
}

/** The node label; distinct from the graphrag knowledge graph's `KgEntity`. */
const LABEL = 'EpisodicNode'
const SEP = '\u001f'

/** Node properties that `describe` returns. */
const PROJECTED = [
  'id', 'name', 'type', 'summary', 'signature', 'facet_type', 'search_text', 'anchor_text', 'description', 'text',
  'created_at', 'updated_at', 'mentioned_time_start_ms', 'mentioned_time_end_ms', 'mentioned_time_confidence',
  'mentioned_time_text', 'derived_doc', 'derived_hash', 'evidence'
] as const

/** The time properties the scorer reads on an Episode (the bundle time bonus). */
const EPISODE_TIMES = ['created_at', 'mentioned_time_start_ms', 'mentioned_time_end_ms', 'mentioned_time_confidence'] as const

const SCHEMA = [
  `CREATE CONSTRAINT episodic_uid IF NOT EXISTS FOR (n:${LABEL}) REQUIRE n.uid IS UNIQUE`,
  `CREATE INDEX episodic_owner IF NOT EXISTS FOR (n:${LABEL}) ON (n.owner_uid)`,
  `CREATE INDEX episodic_ns IF NOT EXISTS FOR (n:${LABEL}) ON (n.ns)`,
  `CREATE INDEX episodic_facet_label IF NOT EXISTS FOR (n:${LABEL}) ON (n.ns, n.search_text)`,
  // a namespace's Episodes, for a request's time range
  `CREATE INDEX episodic_ns_type IF NOT EXISTS FOR (n:${LABEL}) ON (n.ns, n.type)`,
  ...EPISODIC_RELATIONSHIPS.map((r) => `CREATE INDEX episodic_${r}_label IF NOT EXISTS FOR ()-[r:${r}]-() ON (r.label_uid)`)
]

/** The targets and, through any relationship, their neighbours: the reach of `describe`. */
const REACH = `UNWIND $uids AS u MATCH (t:${LABEL} {uid: u}) OPTIONAL MATCH (t)-[r]-(o:${LABEL})`
/**
 * A neighbour `o` reached through `r`, kept only when it is in the namespace (`collect` drops the nulls).
 * Checked on what the expansion reached: a `{ns: $ns}` in the pattern lets the planner start from the
 * namespace's index and expand back from every node of the namespace (seconds instead of milliseconds).
 */
const inNamespace = (value: string, o: string) => `CASE WHEN ${o}.ns = $ns THEN ${value} END`
/** Orders an unhit neighbour after every hit one, as +∞ does in the in-process projection. */
const UNHIT = '1.0e308'

const NODE_TYPES = ['Episode', 'Facet', 'FacetPoint', 'Entity'] as const
/** Cypher for `value`'s position in `names`, or the value itself when it is none of them. */
const code = (value: string, names: readonly string[]): string =>
  `CASE ${value} ${names.map((n, i) => `WHEN '${n}' THEN ${i}`).join(' ')} ELSE ${value} END`
const decode = (value: number | string, names: readonly string[]): string => (typeof value === 'number' ? names[value]! : value)
/** Cypher for phase 2's type priority of `value` (a node type), as the in-process projection orders it. */
const typePriority = (value: string): string =>
  `CASE ${value} ${Object.entries(TYPE_PRIORITY).map(([t, p]) => `WHEN '${t}' THEN ${p}`).join(' ')} ELSE ${OTHER_TYPE_PRIORITY} END`

/**
 * Phase 2's order among the hits outside the relevant ids, as ranks in the in-process order (`relevantIds`:
 * ascending best score, ties by id). Relevant ids are never phase-2 candidates, so they are left out: the
 * whole score map was the statement's largest parameter (about 12 KB in the 1k-Episode bench).
 */
function rankOutside(bestById: ReadonlyMap<string, number>, relevant: ReadonlySet<string>): Record<string, Integer> {
  const outside = relevantIds(bestById, Infinity).filter((id) => !relevant.has(id))
  return Object.fromEntries(outside.map((id, i) => [id, int(i)]))
}

function isConnection(c: Neo4jConnection | Neo4jConnectionOptions): c is Neo4jConnection {
  return typeof (c as Neo4jConnection).run === 'function'
}

/**
 * The Neo4j episodic graph: `EpisodicNode` nodes with a `type`, relationships `has_facet`, `has_point`, `involves_entity`.
 * Every node carries its namespace (`ns`) and is keyed by `uid`, the namespace and the id joined by U+001F:
 * a uniqueness constraint on it is the composite (namespace, id) key, kept as one property so that each
 * lookup of the projection is one index seek. Every statement starts from nodes of its namespace and
 * reaches only nodes of it (both ends of every projected edge are members, as in m-flow).
 */
export class Neo4jEpisodicGraphStore implements EpisodicGraphStore {
  readonly backend = 'neo4j' as const
  private readonly conn: Neo4jConnection
  private readonly ownsConnection: boolean
  private schema: Promise<void> | null = null

  constructor(options: Neo4jEpisodicGraphStoreOptions) {
    this.ownsConnection = !isConnection(options.connection)
    this.conn = (isConnection(options.connection) ? options.connection : createNeo4jConnection(options.connection)).named(backendName('episodic-graph', 'neo4j'))
  }

  private uid(ns: string, id: string): string {
    return `${ns}${SEP}${id}`
  }

  private ensureSchema(): Promise<void> {
    this.schema ??= (async () => {
      for (const statement of SCHEMA) {
        try {
          await this.conn.run(statement)
        } catch (error) {
          // Another process may create the same rule at the same moment; an equivalent rule is what we want.
          if (!/already exists|EquivalentSchemaRule/i.test(String((error as Error).message))) throw error
        }
      }
    })().catch((error: unknown) => {
      this.schema = null
      throw error
    })
    return this.schema
  }

  private nodeProps(ns: string, n: EpisodicNode, owner: string | null): Record<string, unknown> {
    const props: Record<string, unknown> = { uid: this.uid(ns, n.id), ns }
    if (owner !== null) props['owner_uid'] = this.uid(ns, owner)
    for (const key of PROJECTED) {
      const v = (n as unknown as Record<string, unknown>)[key]
      if (v !== undefined && v !== null) props[key] = v
    }
    return props
  }

  async apply(namespace: string, change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult> {
    const ns = checkNamespace(namespace)
    await this.ensureSchema()
    const written = lastVersions(change.episodes ?? [])
    const entities = change.entities ?? []
    for (const ep of written) {
      for (const e of ep.edges) {
        if (!(EPISODIC_RELATIONSHIPS as readonly string[]).includes(e.relationship_name)) {
          throw new Error(`edge ${e.from} -> ${e.to}: unsupported relationship ${e.relationship_name}`)
        }
      }
    }
    const replacedIds = [...new Set([...(change.deleteEpisodeIds ?? []), ...written.map((e) => e.episode.id)])]
    const replacedUids = replacedIds.map((id) => this.uid(ns, id))
    const willExist = new Set<string>(entities.map((e) => e.id))
    for (const ep of written) for (const n of [ep.episode, ...ep.nodes]) willExist.add(n.id)
    const outside = new Set<string>()
    for (const ep of written) for (const e of ep.edges) for (const end of [e.from, e.to]) if (!willExist.has(end)) outside.add(end)

    return this.conn.write(async (tx: ManagedTransaction) => {
      // Edge ends that this change does not write must exist and must not be going away with it.
      if (outside.size > 0) {
        const found = await tx.run(
          `UNWIND $uids AS u MATCH (n:${LABEL} {uid: u})
           WHERE n.owner_uid IS NULL OR NOT n.owner_uid IN $replaced RETURN n.id AS id`,
          { uids: [...outside].map((id) => this.uid(ns, id)), replaced: replacedUids }
        )
        const present = new Set(found.records.map((r) => r.get('id') as string))
        const missing = [...outside].filter((id) => !present.has(id)).sort()
        if (missing.length > 0) throw new Error(`edges refer to unknown nodes: ${missing.join(', ')}`)
      }

      const old = await tx.run(
        `MATCH (o:${LABEL}) WHERE o.owner_uid IN $replaced
         OPTIONAL MATCH (o)-[r]-(x:${LABEL})
         RETURN o.id AS id, o.type AS type,
                collect(DISTINCT CASE WHEN x.type = 'Entity' THEN x.uid END) AS ents, collect(DISTINCT r.label) AS labels`,
        { replaced: replacedUids }
      )
      const oldNodes = old.records.map((r) => ({ id: r.get('id') as string, type: r.get('type') as string }))
      const entityEnds = new Set(old.records.flatMap((r) => r.get('ents') as string[]))
      const labels = new Set(old.records.flatMap((r) => r.get('labels') as string[]))
      await tx.run(`MATCH (o:${LABEL}) WHERE o.owner_uid IN $replaced DETACH DELETE o`, { replaced: replacedUids })

      if (entities.length > 0) {
        await tx.run(`UNWIND $rows AS row MERGE (n:${LABEL} {uid: row.uid}) SET n = row`, {
          rows: entities.map((e) => this.nodeProps(ns, e, null))
        })
      }
      const nodeRows = written.flatMap((ep) => [ep.episode, ...ep.nodes].map((n) => this.nodeProps(ns, n, ep.episode.id)))
      if (nodeRows.length > 0) {
        await tx.run(`UNWIND $rows AS row MERGE (n:${LABEL} {uid: row.uid}) SET n = row`, { rows: nodeRows })
      }
      for (const rel of EPISODIC_RELATIONSHIPS) {
        const rows = written.flatMap((ep) =>
          ep.edges.filter((e) => e.relationship_name === rel).map((e) => {
            const label = e.edge_text || e.relationship_name
            const props: Record<string, unknown> = {
              relationship_name: e.relationship_name, label, label_uid: this.uid(ns, label), ns,
              owner_uid: this.uid(ns, ep.episode.id)
            }
            if (e.edge_text) props['edge_text'] = e.edge_text
            if (e.description) props['description'] = e.description
            return { a: this.uid(ns, e.from), b: this.uid(ns, e.to), props }
          })
        )
        if (rows.length === 0) continue
        await tx.run(
          `UNWIND $rows AS row MATCH (a:${LABEL} {uid: row.a}), (b:${LABEL} {uid: row.b})
           CREATE (a)-[r:${rel}]->(b) SET r = row.props`,
          { rows }
        )
      }

      const writtenEntityUids = entities.map((e) => this.uid(ns, e.id))
      const orphans = await tx.run(
        `UNWIND $cands AS u MATCH (n:${LABEL} {uid: u})
         WHERE NOT u IN $written AND NOT (n)--()
         WITH n, n.id AS id DELETE n RETURN id`,
        { cands: [...entityEnds], written: writtenEntityUids }
      )
      const unused = await tx.run(
        `UNWIND $labels AS l WITH l, $prefix + l AS lu
         WHERE NOT EXISTS { ()-[:has_facet {label_uid: lu}]->() }
           AND NOT EXISTS { ()-[:has_point {label_uid: lu}]->() }
           AND NOT EXISTS { ()-[:involves_entity {label_uid: lu}]->() }
         RETURN l`,
        { labels: [...labels], prefix: `${ns}${SEP}` }
      )
      const rewritten = new Set<string>()
      for (const ep of written) for (const n of [ep.episode, ...ep.nodes]) rewritten.add(n.id)
      const deleteIds = new Set(change.deleteEpisodeIds ?? [])
      return {
        deletedEpisodeIds: oldNodes.filter((n) => n.type === 'Episode' && deleteIds.has(n.id) && !rewritten.has(n.id)).map((n) => n.id).sort(),
        removedNodeIds: oldNodes.filter((n) => n.type !== 'Episode' && !rewritten.has(n.id)).map((n) => n.id).sort(),
        removedEntityIds: orphans.records.map((r) => r.get('id') as string).sort(),
        unusedLabels: unused.records.map((r) => r.get('l') as string).sort()
      }
    })
  }

  /**
   * Both phases and the stray Episodes in one statement, one row back as parallel lists (the driver decodes
   * flat lists of scalars fastest): every node's id and type, the Episodes' times, every edge's ends and
   * relationship, and for the edge texts only the position of a retrieved label among them (the texts are
   * most of the bytes, and no other text changes a cost). The targets are the namespace's (their uids carry
   * it) and so must be every neighbour: edges are only ever written inside one namespace, and the
   * neighbours' `ns` is checked all the same, as m-flow keeps a projected edge only when both ends are
   * members of the memory space. Every Episode hit outside the relevant ids (phase 1's
   * targets) is looked up: one the phases reached is there already, any other is exactly a stray (difference 5).
   * Ids travel without their namespace prefix, which the statement adds.
   */
  async project(namespace: string, request: ProjectionRequest, signal?: AbortSignal): Promise<GraphFragment> {
    const ns = checkNamespace(namespace)
    const nodes = new Map<string, EpisodicNode>()
    const edges: EpisodicEdge[] = []
    if (request.relevant_ids.length === 0) return { nodes, edges }
    await this.ensureSchema()
    const labels = request.retrieved_labels ? [...request.retrieved_labels] : null
    const relevant = new Set(request.relevant_ids)
    const result = await this.conn.run(
      `UNWIND $relevant AS u
       MATCH (t:${LABEL} {uid: $prefix + u})
       OPTIONAL MATCH (t)-[r]-(o:${LABEL})
       WITH collect(DISTINCT t) AS ts, collect(DISTINCT ${inNamespace('o', 'o')}) AS os1, collect(DISTINCT ${inNamespace('r', 'o')}) AS rs1
       CALL {
         WITH os1
         UNWIND os1 AS n
         WITH n WHERE NOT n.id IN $relevant
         WITH n ORDER BY ${typePriority('n.type')}, coalesce($rank[n.id], ${UNHIT}), n.id
         LIMIT $room
         RETURN collect(n) AS chosen
       }
       CALL {
         WITH chosen
         UNWIND chosen AS c
         OPTIONAL MATCH (c)-[r2]-(o2:${LABEL})
         RETURN collect(DISTINCT ${inNamespace('r2', 'o2')}) AS rs2, collect(DISTINCT ${inNamespace('o2', 'o2')}) AS os2
       }
       CALL {
         UNWIND $strays AS su
         MATCH (s:${LABEL} {uid: $prefix + su})
         RETURN collect(s) AS strays
       }
       CALL { WITH ts, os1, chosen, os2, strays UNWIND ts + os1 + chosen + os2 + strays AS n WITH DISTINCT n RETURN collect(n) AS ns }
       CALL { WITH rs1, rs2 UNWIND rs1 + rs2 AS r WITH DISTINCT r RETURN collect(r) AS rs }
       WITH ns, rs, [n IN ns WHERE n.type = 'Episode'] AS eps
       RETURN [n IN ns | id(n)] AS keys, [n IN ns | n.id] AS ids, [n IN ns | ${code('n.type', NODE_TYPES)}] AS types,
              [n IN eps | id(n)] AS episodes, ${EPISODE_TIMES.map((p) => `[n IN eps | n.${p}] AS ${p}`).join(', ')},
              [r IN rs | id(startNode(r))] AS froms, [r IN rs | id(endNode(r))] AS tos,
              [r IN rs | ${code('type(r)', EPISODIC_RELATIONSHIPS)}] AS rels,
              ${labels ? '[r IN rs | $labels[r.label]]' : '[r IN rs | r.edge_text]'} AS texts`,
      {
        ns,
        prefix: this.uid(ns, ''),
        relevant: request.relevant_ids,
        rank: rankOutside(request.best_by_id, relevant),
        room: int(Math.max(0, request.max_ids - request.relevant_ids.length)),
        strays: [...new Set(request.episode_hit_ids)].filter((id) => !relevant.has(id)),
        labels: labels ? Object.fromEntries(labels.map((l, i) => [l, i])) : {}
      },
      'READ', signal
    )
    const record = result.records[0]
    if (!record) return { nodes, edges }
    // Edges name their ends by the database's internal node ids, and types come as codes: integers, which
    // the driver decodes far faster than strings. The ids only pair ends with nodes inside this one result.
    const byKey = new Map<number, EpisodicNode>()
    const ids = record.get('ids') as string[]
    const types = record.get('types') as Array<number | string>
    ;(record.get('keys') as number[]).forEach((key, i) => {
      const node: EpisodicNode = { id: ids[i]!, type: decode(types[i]!, NODE_TYPES) }
      byKey.set(key, node)
      nodes.set(node.id, node)
    })
    const times = EPISODE_TIMES.map((p) => record.get(p) as Array<number | null>)
    ;(record.get('episodes') as number[]).forEach((key, i) => {
      const node = byKey.get(key) as unknown as Record<string, unknown>
      EPISODE_TIMES.forEach((p, k) => { const v = times[k]![i]; if (v !== null && v !== undefined) node[p] = v })
    })
    const tos = record.get('tos') as number[]
    const rels = record.get('rels') as Array<number | string>
    const texts = record.get('texts') as Array<string | number | null>
    ;(record.get('froms') as number[]).forEach((from, i) => {
      const rel = decode(rels[i]!, EPISODIC_RELATIONSHIPS)
      const edge: EpisodicEdge = { from: byKey.get(from)!.id, to: byKey.get(tos[i]!)!.id, relationship_name: rel, edge_text: null, relationship_type: rel }
      const text = texts[i]
      if (!labels) edge.edge_text = (text as string | null) ?? null
      else if (typeof text === 'number') edge.edge_text = labels[text]!
      else edge.label_withheld = true
      edges.push(edge)
    })
    return { nodes, edges }
  }

  /** One hop from each id, with every projected property and the edges' descriptions. */
  async describe(namespace: string, ids: readonly string[], signal?: AbortSignal): Promise<GraphFragment> {
    const ns = checkNamespace(namespace)
    const nodes = new Map<string, EpisodicNode>()
    const edges: EpisodicEdge[] = []
    if (ids.length === 0) return { nodes, edges }
    await this.ensureSchema()
    const result = await this.conn.run(
      `${REACH}
       WITH collect(DISTINCT t) + collect(DISTINCT ${inNamespace('o', 'o')}) AS ns, collect(DISTINCT ${inNamespace('r', 'o')}) AS rs
       RETURN [n IN ns | [${PROJECTED.map((p) => `n.${p}`).join(', ')}]] AS nodes,
              [r IN rs | [startNode(r).id, endNode(r).id, type(r), r.edge_text, r.description]] AS edges`,
      { uids: ids.map((id) => this.uid(ns, id)), ns },
      'READ', signal
    )
    const record = result.records[0]
    if (!record) return { nodes, edges }
    for (const values of record.get('nodes') as unknown[][]) {
      const id = values[0] as string
      if (nodes.has(id)) continue
      const node: Record<string, unknown> = {}
      PROJECTED.forEach((key, i) => {
        const v = values[i]
        if (v !== undefined && v !== null) node[key] = v
      })
      nodes.set(id, node as unknown as EpisodicNode)
    }
    for (const [from, to, type, text, description] of record.get('edges') as Array<[string, string, string, string | null, string | null]>) {
      edges.push({ from, to, relationship_name: type, edge_text: text, relationship_type: type, ...(description ? { description } : {}) })
    }
    return { nodes, edges }
  }

  async facetLabelEpisodes(namespace: string, labels: readonly string[]): Promise<Map<string, string[]>> {
    const ns = checkNamespace(namespace)
    const out = new Map<string, string[]>()
    if (labels.length === 0) return out
    await this.ensureSchema()
    const result = await this.conn.run(
      `UNWIND $labels AS l
       MATCH (f:${LABEL} {ns: $ns, search_text: l}) WHERE f.type = 'Facet'
       MATCH (e:${LABEL} {uid: f.owner_uid})
       WITH l, collect(DISTINCT e.id) AS episodes
       RETURN l, episodes`,
      { labels: [...new Set(labels)], ns },
      'READ'
    )
    for (const r of result.records) out.set(r.get('l') as string, (r.get('episodes') as string[]).sort())
    return out
  }

  async nodeTypes(namespace: string, ids: readonly string[]): Promise<Map<string, string>> {
    const ns = checkNamespace(namespace)
    const out = new Map<string, string>()
    if (ids.length === 0) return out
    await this.ensureSchema()
    const result = await this.conn.run(
      `UNWIND $uids AS u MATCH (n:${LABEL} {uid: u}) RETURN n.id AS id, n.type AS type`,
      { uids: ids.map((id) => this.uid(ns, id)) },
      'READ'
    )
    for (const r of result.records) out.set(r.get('id') as string, r.get('type') as string)
    return out
  }

  async episodesInTimeRange(namespace: string, range: TimeRangeMs, signal?: AbortSignal): Promise<string[]> {
    const ns = checkNamespace(namespace)
    await this.ensureSchema()
    const result = await this.conn.run(
      `MATCH (n:${LABEL} {ns: $ns, type: 'Episode'})
       WITH n, coalesce(n.mentioned_time_start_ms, n.mentioned_time_end_ms) AS s, coalesce(n.mentioned_time_end_ms, n.mentioned_time_start_ms) AS e
       WHERE s IS NOT NULL AND ($end IS NULL OR s <= $end) AND ($start IS NULL OR e >= $start)
       RETURN n.id AS id`,
      { ns, start: range.start_ms ?? null, end: range.end_ms ?? null },
      'READ', signal
    )
    return result.records.map((r) => r.get('id') as string).sort()
  }

  async countByType(namespace: string): Promise<Record<string, number>> {
    const ns = checkNamespace(namespace)
    await this.ensureSchema()
    const result = await this.conn.run(
      `MATCH (n:${LABEL} {ns: $ns}) RETURN n.type AS type, count(*) AS c`,
      { ns },
      'READ'
    )
    return Object.fromEntries(result.records.map((r) => [r.get('type') as string, Number(r.get('c'))]))
  }

  async namespaces(): Promise<string[]> {
    await this.ensureSchema()
    const result = await this.conn.run(`MATCH (n:${LABEL}) RETURN DISTINCT n.ns AS ns`, {}, 'READ')
    return result.records.map((r) => r.get('ns') as string).filter((ns) => typeof ns === 'string').sort()
  }

  async dropNamespace(namespace: string): Promise<void> {
    const ns = checkNamespace(namespace)
    // Managed transactions cannot run `IN TRANSACTIONS`; delete in bounded batches instead.
    for (;;) {
      const result = await this.conn.run(
        `MATCH (n:${LABEL} {ns: $ns}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS c`,
        { ns }
      )
      if (Number(result.records[0]?.get('c') ?? 0) === 0) return
    }
  }

  health(): Promise<BackendHealth> {
    return this.conn.health()
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.conn.close()
  }
}
