/**
 * What the Neo4j episodic graph's derived-Episode writes cost as a namespace grows: N synthetic CMRC documents
 * (`bench/lib/synthetic.ts`, one chunk each) derive their Episodes (`deriveEpisodes` over `deriveDocument`'s entities,
 * linking `--links facet,episode` entities, as `DERIVED_EPISODE_ENTITY_LINKS` does) and are written 100 a write through
 * the store calls a documents write makes for them (`replaceDerivedEpisodes`: the candidate ids' types, the stored
 * Episodes described, the linked entities' types, one `apply` with the new entities only), into one namespace of a Neo4j
 * server this bench starts (`scripts/neo4j/server.ts`). Derivation is left out of the timing; vectors are not written
 * (another store).
 *
 *   npx tsx bench/neo4j-episode-write.ts [--documents 20000] [--segment 5000] [--links 4,8] [--min-mentions 2]
 *     [--neo4j-heap 1g] [--out FILE]
 *
 * Per segment: the server's CPU ms a document (its JVM's CPU time, from /proc), this process's, each write's wall ms
 * (p50, p99, max) and the parameter bytes its writes hand the server a document (their JSON); then, at the segment's
 * end, two probes on the namespace as it is: the first 100 documents' Episodes deleted (`apply` with their ids) and
 * written again (the calls above), each with its server CPU ms and bytes a document; the most edges an entity has
 * (the hubs every write links to), the store's bytes and the JVM's memory. With `--out`, the report so far after each
 * segment (`partial: true`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { deriveDocument } from '../src/derive/document.js'
import { DEFAULT_EPISODE_OPTIONS, deriveEpisodes, derivedEpisodeIds, type EpisodeDerivationOptions } from '../src/derive/episodes.js'
import { derivationOptions } from '../src/derive/options.js'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { Neo4jEpisodicGraphStore } from '../src/providers/episodic-graph/neo4j.js'
import type { EpisodeGraph, EpisodicNode } from '../src/providers/episodic-graph/port.js'
import { createNeo4jConnection } from '../src/providers/neo4j/connection.js'
import { startNeo4j } from '../scripts/neo4j/server.js'
import { loadCmrc } from './lib/cmrc.js'
import { countedView, jvmMemory, serverCpuMs, storeBytes } from './lib/neo4j-process.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values: args } = parseArgs({
  options: {
    documents: { type: 'string', default: '20000' }, segment: { type: 'string', default: '5000' }, links: { type: 'string', default: '4,8' },
    'min-mentions': { type: 'string', default: '2' }, 'neo4j-heap': { type: 'string', default: '1g' }, out: { type: 'string' }
  }
})
const NS = 'bench'
const BATCH = 100
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
/** The q-quantile of `xs` by the nearest rank. */
const quantile = (xs: readonly number[], q: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!

const [perFacet, perEpisode] = args.links.split(',').map(Number) as [number, number]
const episodeOptions: EpisodeDerivationOptions = {
  ...DEFAULT_EPISODE_OPTIONS, entitiesPerFacet: perFacet, entitiesPerEpisode: perEpisode, entityMinMentions: Number(args['min-mentions'])
}
const derivation = derivationOptions()
const docs = syntheticDocuments((await loadCmrc()).documents.map((d) => d.text), Number(args.documents))
const segment = Number(args.segment)

const dir = await mkdtemp(join(tmpdir(), 'recall-episode-write-'))
const server = await startNeo4j({ heap: args['neo4j-heap'], dataDir: dir })
const sent = { bytes: 0 }
const connection = createNeo4jConnection({ uri: server.uri, timeoutMs: 600_000, writeTimeoutMs: 600_000 })
const store = new Neo4jEpisodicGraphStore({ connection: countedView(connection, sent) })

/** A document's derived Episodes, as the write path derives them from its one stored chunk. */
function derive(doc: DocumentInput) {
  const chunk = { id: `${doc.id}#0`, chunk_index: 0, text: doc.text, passage: doc.text }
  const contribution = deriveDocument([{ id: chunk.id, text: doc.text }], derivation)
  return { docId: doc.id, ...deriveEpisodes(doc.id, [chunk], contribution.entities, episodeOptions) }
}

/** The store calls `replaceDerivedEpisodes` makes for these documents' derived Episodes (src/corpus/appliers/writers/derived-episodes.ts). */
async function writeDerived(derived: ReturnType<typeof derive>[]): Promise<void> {
  const candidates = derived.flatMap((d) => derivedEpisodeIds(d.docId, episodeOptions))
  const present = [...(await store.nodeTypes(NS, candidates)).entries()].filter(([, type]) => type === 'Episode').map(([id]) => id)
  const stored = present.length > 0 ? (await store.describe(NS, present)).nodes : new Map<string, EpisodicNode>()
  const write: EpisodeGraph[] = []
  const remove: string[] = []
  const entities = new Map<string, EpisodicNode>()
  for (const d of derived) {
    const fresh = new Set(d.episodes.map((e) => e.episode.id))
    for (const id of derivedEpisodeIds(d.docId, episodeOptions)) if (stored.get(id)?.derived_doc === d.docId && !fresh.has(id)) remove.push(id)
    for (const graph of d.episodes) if (stored.get(graph.episode.id)?.derived_hash !== graph.episode.derived_hash) write.push(graph)
    for (const e of d.entities) entities.set(e.id, e)
  }
  if (write.length === 0 && remove.length === 0) return
  const linked = new Set(write.flatMap((g) => g.edges.map((e) => e.to)))
  const known = await store.nodeTypes(NS, [...entities.keys()].filter((id) => linked.has(id)))
  await store.apply(NS, { entities: [...entities.values()].filter((e) => linked.has(e.id) && !known.has(e.id)), episodes: write, deleteEpisodeIds: remove })
}

/** The server's CPU ms and the parameter bytes `work` cost. */
async function measured(work: () => Promise<unknown>): Promise<{ server_cpu_ms: number; bytes: number; ms: number; cpu_ms: number }> {
  const server0 = await serverCpuMs(server.pid)
  const bytes0 = sent.bytes
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { server_cpu_ms: (await serverCpuMs(server.pid)) - server0, bytes: sent.bytes - bytes0, ms, cpu_ms: (cpu.user + cpu.system) / 1000 }
}

const segments: Record<string, unknown>[] = []
const startedAt = loadavg().map((x) => round(x, 1))
const report = (rest: Record<string, unknown>) => ({
  generated_by: 'bench/neo4j-episode-write.ts', at: new Date().toISOString(), documents: docs.length, batch_documents: BATCH,
  links: { per_facet: perFacet, per_episode: perEpisode, min_mentions: episodeOptions.entityMinMentions }, neo4j_heap: args['neo4j-heap'],
  load_average_at_start: startedAt, load_average_at_end: loadavg().map((x) => round(x, 1)), segments, ...rest
})
try {
  let batches: Array<Awaited<ReturnType<typeof measured>>> = []
  let loads: number[] = []
  for (let i = 0; i < docs.length; i += BATCH) {
    const derived = docs.slice(i, i + BATCH).map(derive)
    batches.push(await measured(() => writeDerived(derived)))
    loads.push(loadavg()[0]!)
    const written = Math.min(i + BATCH, docs.length)
    if (written % segment !== 0 && written !== docs.length) continue
    const n = batches.length * BATCH
    const sum = (key: keyof (typeof batches)[number]) => batches.reduce((a, b) => a + b[key], 0)
    const first = docs.slice(0, BATCH).map(derive)
    const deleted = await measured(() => store.apply(NS, { deleteEpisodeIds: first.flatMap((d) => d.episodes.map((e) => e.episode.id)) }))
    const rewritten = await measured(() => writeDerived(first))
    const row = {
      documents_written: written, nodes: await store.countByType(NS), entity_edges_max: await mostEntityEdges(),
      load_average_1m_mean: round(loads.reduce((a, x) => a + x, 0) / loads.length, 1),
      server_cpu_ms_per_document: round(sum('server_cpu_ms') / n), cpu_ms_per_document: round(sum('cpu_ms') / n),
      write_ms: { p50: round(quantile(batches.map((b) => b.ms), 0.5), 1), p99: round(quantile(batches.map((b) => b.ms), 0.99), 1), max: round(Math.max(...batches.map((b) => b.ms)), 1) },
      sent_bytes_per_document: Math.round(sum('bytes') / n),
      probe_delete: { server_cpu_ms_per_document: round(deleted.server_cpu_ms / BATCH), sent_bytes_per_document: Math.round(deleted.bytes / BATCH), ms: round(deleted.ms, 1) },
      probe_rewrite: { server_cpu_ms_per_document: round(rewritten.server_cpu_ms / BATCH), sent_bytes_per_document: Math.round(rewritten.bytes / BATCH), ms: round(rewritten.ms, 1) },
      store_bytes: await storeBytes(dir), server_jvm_mib: await jvmMemory(server.pid!)
    }
    segments.push(row)
    console.error(JSON.stringify(row))
    if (args.out) await writeFile(args.out, `${JSON.stringify(report({ partial: true }), null, 2)}\n`)
    batches = []
    loads = []
  }
  await connection.close()
  await server.stop()
  const text = JSON.stringify(report({ store_bytes_after_stop: await storeBytes(dir) }), null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
} finally {
  await connection.close()
  await server.stop()
  await rm(dir, { recursive: true, force: true })
}

/** The most edges any of the namespace's entities has (read apart from the timed writes). */
async function mostEntityEdges(): Promise<number> {
  const result = await connection.run(
    `MATCH (n:EpisodicNode {ns: $ns}) WHERE n.type = 'Entity' RETURN coalesce(max(COUNT { (n)--() }), 0) AS most`, { ns: NS }, 'READ'
  )
  return Number(result.records[0]?.get('most') ?? 0)
}
