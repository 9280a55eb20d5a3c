/**
 * The conversations applier (docs/conversations.md): each session sent is merged with what the namespace holds of it
 * (turns replaced by id in place, new ones appended, the other sessions untouched), derived again as one Episode
 * (`src/derive/conversation/session-episode.ts`) and written in the derived Episodes' collections. Only turn texts the
 * namespace does not hold yet are embedded (before the lock); a kept turn takes its stored vector, Facets and summaries
 * the means of their turns', so appending one turn costs that turn's embedding and the rewrite of its session.
 */
import { parseQueryTime } from '../../../../adapters/episodic/time-parse.js'
import type { DerivationOptions } from '../../../derive/options.js'
import { namedThings } from '../../../derive/conversation/named-things.js'
import {
  conversationMarker, conversationRecordId, deriveSession, DEFAULT_SESSION_OPTIONS, sessionEpisodeId, storedTurnsOf, turnPointId, turnText,
  type AnchoredTime, type ChatSession, type ChatTurn, type SessionDerivationOptions
} from '../../../derive/conversation/session-episode.js'
import type { EpisodeGraph, EpisodicNode } from '../../../providers/episodic-graph/port.js'
import { deleteEpisodes } from './episode-deletes.js'
import { writeEpisodeGraphs, type EpisodicIngestPorts } from './episode-graphs.js'
import type { Exclusive } from '../../write-lock.js'
import { ConversationIngestError, type ConversationInput } from '../../conversations/body.js'
import type { ConversationsWritten } from '../../conversations/results.js'

export interface ConversationWriteOptions {
  namespace: string
  /** `COLLECTION_PREFIX` + `derived_`: conversations live with the derived Episodes. */
  collectionPrefix: string
  /** The namespace's `episodes:` lock. */
  exclusive: Exclusive
  derivation: DerivationOptions
  session?: SessionDerivationOptions
}

/** The conversation record's `evidence`: its participants and sessions, for deleting it whole. */
interface ConversationRecord {
  participants: string[]
  sessions: Array<{ id: string; time: string }>
}

const POINTS = 'FacetPoint_search_text'

export async function upsertConversations(
  ports: EpisodicIngestPorts, conversations: readonly ConversationInput[], options: ConversationWriteOptions
): Promise<ConversationsWritten> {
  const { namespace, collectionPrefix: prefix } = options
  const sessionOptions = options.session ?? DEFAULT_SESSION_OPTIONS
  const ids = conversations.flatMap((c) => [conversationRecordId(c.id), ...c.sessions.map((s) => sessionEpisodeId(c.id, s.id))])
  // the slow, failure-prone part first, before the lock: the turn texts the namespace does not hold as sent
  const before = await nodesOf(ports, namespace, ids)
  const fresh = new Map<string, Float32Array>()
  await embedInto(ports, fresh, conversations.flatMap((c) => c.sessions.flatMap((s) => {
    const held = new Map(storedTurnsOf(before.get(sessionEpisodeId(c.id, s.id))).map((t) => [t.turn_id, turnText(t)] as const))
    return s.turns.map(turnText).filter((text, k) => held.get(s.turns[k]!.id) !== text)
  })))
  return options.exclusive(async (lease) => {
    const stored = await nodesOf(ports, namespace, ids)
    const problems: string[] = []
    for (const c of conversations) {
      for (const id of [conversationRecordId(c.id), ...c.sessions.map((s) => sessionEpisodeId(c.id, s.id))]) {
        const node = stored.get(id)
        if (node && node.derived_doc !== conversationMarker(c.id)) problems.push(`conversation ${JSON.stringify(c.id)}: Episode id "${id}" is held by another Episode`)
      }
    }
    if (problems.length > 0) throw new ConversationIngestError(problems)
    const merged = conversations.flatMap((c) => c.sessions.map((s) => ({ conversation: c.id, session: mergeSession(s, stored.get(sessionEpisodeId(c.id, s.id))) })))
    const vectors = await turnVectors(ports, namespace, prefix, merged, stored, fresh)
    const write: EpisodeGraph[] = []
    const given = new Map<string, Float32Array>()
    const linked = new Map<string, EpisodicNode>()
    let turns = 0
    for (const { conversation, session } of merged) {
      const anchored = session.turns.map((t) => anchoredTime(t, session))
      const derived = deriveSession(conversation, session, session.turns.map((t) => vectors.get(turnText(t))!), anchored,
        namedThings(session.turns, options.derivation), sessionOptions)
      if (stored.get(derived.graph.episode.id)?.derived_hash === derived.graph.episode.derived_hash) continue
      write.push(derived.graph)
      turns += session.turns.length
      for (const [k, v] of derived.vectors) given.set(k, v)
      for (const e of derived.entities) linked.set(e.id, e)
    }
    for (const c of conversations) write.push(conversationRecord(c, stored.get(conversationRecordId(c.id))))
    const known = await ports.graph.nodeTypes(namespace, [...linked.keys()])
    const labels = await storedLabelVectors(ports, namespace, prefix, write, [...linked.values()], known)
    lease.assertHeld()
    const written = await writeEpisodeGraphs(ports, { entities: [...linked.values()].filter((e) => !known.has(e.id)), episodes: write }, {
      namespace, collectionPrefix: prefix, exclusive: (work) => work(lease),
      vectorFor: (collection, id) => given.get(`${collection}\u0000${id}`) ?? (collection === 'RelationType_relationship_name' ? labels.get(id) : undefined)
    })
    return {
      conversations: conversations.length,
      sessions: merged.length,
      sessions_written: write.length - conversations.length,
      turns,
      turns_embedded: fresh.size + vectors.embeddedNow,
      facets: written.facets,
      entities: written.entities,
      vectors: written.vectors
    }
  })
}

/** Deletes conversations with every session Episode, vector and entity link derived from them; the ids found. */
export async function deleteConversations(
  ports: EpisodicIngestPorts, ids: readonly string[], options: Pick<ConversationWriteOptions, 'namespace' | 'collectionPrefix' | 'exclusive'>
): Promise<{ deleted: string[] }> {
  const { namespace, collectionPrefix } = options
  return options.exclusive(async (lease) => {
    const records = await nodesOf(ports, namespace, ids.map(conversationRecordId))
    const found = ids.filter((id) => records.get(conversationRecordId(id))?.derived_doc === conversationMarker(id))
    if (found.length === 0) return { deleted: [] }
    const episodeIds = found.flatMap((id) => [conversationRecordId(id), ...recordOf(records.get(conversationRecordId(id))).sessions.map((s) => sessionEpisodeId(id, s.id))])
    await deleteEpisodes(ports, episodeIds, { namespace, collectionPrefix, exclusive: (work) => work(lease) })
    return { deleted: found }
  })
}

/** The session as it is now: the stored turns, those sent replacing theirs in place, the new ones after them in the order sent. */
function mergeSession(sent: ChatSession, stored: EpisodicNode | undefined): ChatSession {
  const byId = new Map(sent.turns.map((t) => [t.id, t] as const))
  const turns: ChatTurn[] = storedTurnsOf(stored).map((t) => byId.get(t.turn_id) ?? {
    id: t.turn_id, speaker: t.speaker, text: t.text, ...(t.own_time ? { time: t.time, time_ms: t.time_ms } : {})
  })
  const held = new Set(turns.map((t) => t.id))
  return { ...sent, turns: [...turns, ...sent.turns.filter((t) => !held.has(t.id))] }
}

/**
 * The vector of every turn text of the merged sessions: embedded before the lock (`fresh`), stored with the turn's
 * FacetPoint when its text is the same, else embedded now (a turn another writer changed meanwhile).
 */
async function turnVectors(
  ports: EpisodicIngestPorts, namespace: string, prefix: string, merged: ReadonlyArray<{ conversation: string; session: ChatSession }>,
  stored: ReadonlyMap<string, EpisodicNode>, fresh: ReadonlyMap<string, Float32Array>
): Promise<Map<string, Float32Array> & { embeddedNow: number }> {
  const byText = new Map<string, Float32Array>(fresh) as Map<string, Float32Array> & { embeddedNow: number }
  const wanted = new Map<string, string>()
  for (const { conversation, session } of merged) {
    const episode = sessionEpisodeId(conversation, session.id)
    const held = new Map(storedTurnsOf(stored.get(episode)).map((t) => [t.turn_id, turnText(t)] as const))
    for (const t of session.turns) {
      const text = turnText(t)
      if (!byText.has(text) && held.get(t.id) === text) wanted.set(turnPointId(episode, t.id), text)
    }
  }
  if (wanted.size > 0) {
    for (const [id, vector] of await ports.vectors.vectorsOf(`${prefix}${POINTS}`, namespace, [...wanted.keys()])) byText.set(wanted.get(id)!, vector)
  }
  const missing = [...new Set(merged.flatMap(({ session }) => session.turns.map(turnText)).filter((t) => !byText.has(t)))]
  await embedInto(ports, byText, missing)
  byText.embeddedNow = missing.length
  return byText
}

async function embedInto(ports: EpisodicIngestPorts, into: Map<string, Float32Array>, texts: readonly string[]): Promise<void> {
  const distinct = [...new Set(texts)].filter((t) => !into.has(t))
  if (distinct.length === 0) return
  const vectors = await ports.embedder.embedPassages(distinct)
  distinct.forEach((t, i) => into.set(t, vectors[i]!))
}

/** The first time expression of a turn, anchored to its time (`last Saturday` said on 8 May 2023 is 6 May 2023). */
function anchoredTime(turn: ChatTurn, session: ChatSession): AnchoredTime | undefined {
  // the calendar of the times as read (UTC, see chat-time.ts)
  const found = parseQueryTime(turn.text, turn.time_ms ?? session.time_ms, 0)
  const first = found.has_time ? found.matches[0] : undefined
  return first ? { text: first.text, start_ms: first.start_ms, end_ms: first.end_ms, confidence: first.confidence } : undefined
}

function conversationRecord(c: ConversationInput, stored: EpisodicNode | undefined): EpisodeGraph {
  const held = recordOf(stored)
  const sent = new Map(c.sessions.map((s) => [s.id, s.time] as const))
  const sessions = [...held.sessions.map((s) => ({ id: s.id, time: sent.get(s.id) ?? s.time })), ...c.sessions.filter((s) => !held.sessions.some((h) => h.id === s.id)).map((s) => ({ id: s.id, time: s.time }))]
  const participants = [...new Set([...held.participants, ...(c.participants ?? []), ...c.sessions.flatMap((s) => s.turns.map((t) => t.speaker))])]
  const record: ConversationRecord = { participants, sessions }
  // no summary, facet or edge: nothing is embedded for it and no search or projection reaches it
  return { episode: { id: conversationRecordId(c.id), type: 'Episode', name: c.id, derived_doc: conversationMarker(c.id), evidence: JSON.stringify(record) }, nodes: [], edges: [] }
}

function recordOf(node: EpisodicNode | undefined): ConversationRecord {
  try {
    const value = node?.evidence ? JSON.parse(node.evidence) as Partial<ConversationRecord> : {}
    return { participants: Array.isArray(value.participants) ? value.participants : [], sessions: Array.isArray(value.sessions) ? value.sessions : [] }
  } catch {
    return { participants: [], sessions: [] }
  }
}

async function nodesOf(ports: EpisodicIngestPorts, namespace: string, ids: readonly string[]): Promise<Map<string, EpisodicNode>> {
  const present = [...(await ports.graph.nodeTypes(namespace, ids)).entries()].filter(([, type]) => type === 'Episode').map(([id]) => id)
  const nodes = new Map<string, EpisodicNode>()
  if (present.length === 0) return nodes
  const fragment = await ports.graph.describe(namespace, present)
  for (const id of present) {
    const node = fragment.nodes.get(id)
    if (node) nodes.set(id, node)
  }
  return nodes
}

/**
 * Vectors the namespace holds already for the edge labels of this write: a label stored before, or the name of a stored
 * entity (an entity link's label is its name), so that a link costs no model run.
 */
async function storedLabelVectors(
  ports: EpisodicIngestPorts, namespace: string, prefix: string, write: readonly EpisodeGraph[], entities: readonly EpisodicNode[],
  known: ReadonlyMap<string, string>
): Promise<Map<string, Float32Array>> {
  const labels = [...new Set(write.flatMap((g) => g.edges.map((e) => e.edge_text || e.relationship_name)))]
  if (labels.length === 0) return new Map()
  const found = await ports.vectors.vectorsOf(`${prefix}RelationType_relationship_name`, namespace, labels)
  const named = entities.filter((e) => known.get(e.id) === 'Entity' && !found.has(e.name ?? ''))
  if (named.length > 0) {
    const vectors = await ports.vectors.vectorsOf(`${prefix}Entity_name`, namespace, named.map((e) => e.id))
    for (const e of named) {
      const v = vectors.get(e.id)
      if (v) found.set(e.name ?? e.id, v)
    }
  }
  return found
}
