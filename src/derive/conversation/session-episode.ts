/**
 * One conversation session as an Episode (docs/conversations.md), without an LLM: its topic segments (from the turns'
 * vectors, `topic-segments.ts`) as Facets, its turns as FacetPoints, the speakers and the things the turns name as
 * Entities. A pure function of the session, its turns' vectors and the options, so that re-deriving a session after a
 * turn is appended replaces exactly what it derived before; every vector is a turn's or a mean of turns' (no model run
 * beyond the turns' own and new entity names).
 */
import { createHash } from 'node:crypto'
import { CONVERSATION_EPISODE_PREFIX, type EpisodeGraph, type EpisodicEdge, type EpisodicNode } from '../../providers/episodic-graph/port.js'
import type { DerivedEntity } from '../document.js'
import { nameKey } from '../normalise.js'
import type { AnchoredTime, StoredTurn } from '../../kernel/conversation-turns.js'
import { meanOf, topicBoundaries, DEFAULT_SEGMENT_OPTIONS, type SegmentOptions } from './topic-segments.js'

export interface ChatTurn {
  id: string
  speaker: string
  text: string
  /** The turn's own time as sent, and read (epoch ms); absent: the session's. */
  time?: string
  time_ms?: number
}

export interface ChatSession {
  id: string
  time: string
  time_ms: number
  turns: ChatTurn[]
}

export interface SessionDerivationOptions {
  segments: SegmentOptions
  /** Named things linked per Facet, most mentioned in the session first. Default 4. */
  entitiesPerFacet: number
  /** Longest Facet label and Episode summary, in characters. Default 80 and 300. */
  maxLabelLength: number
  maxSummaryLength: number
  /** Anchored times at most this many days long widen the Episode's mentioned time. Default 31. */
  maxMentionedDays: number
}

export type { AnchoredTime,  }
export { storedTurnsOf } from '../../kernel/conversation-turns.js'

export const DEFAULT_SESSION_OPTIONS: SessionDerivationOptions = {
  segments: DEFAULT_SEGMENT_OPTIONS, entitiesPerFacet: 4, maxLabelLength: 80, maxSummaryLength: 300, maxMentionedDays: 31
}

/** The marker a conversation's Episodes carry in `derived_doc`. */
export const conversationMarker = (conversation: string): string => `conversation:${conversation}`

const CONVERSATION_PREFIX = CONVERSATION_EPISODE_PREFIX

/** The conversation's own record (participants and sessions): an Episode node with no text, so never retrieved. */
export const conversationRecordId = (conversation: string): string => `${CONVERSATION_PREFIX}${encodeURIComponent(conversation)}`
export const sessionEpisodeId = (conversation: string, session: string): string =>
  `${conversationRecordId(conversation)}/${encodeURIComponent(session)}`
export const turnPointId = (episodeId: string, turn: string): string => `${episodeId}/t/${encodeURIComponent(turn)}`

/** The text a turn's FacetPoint holds and is embedded from. */
export const turnText = (turn: Pick<ChatTurn, 'speaker' | 'text'>): string => `${turn.speaker}: ${turn.text}`

export interface DerivedSession {
  graph: EpisodeGraph
  /** Vectors of the Episode's records by `collection\u0000id`: turns' own, Facets' and the summary's means. */
  vectors: Map<string, Float32Array>
  /** Entities the Episode links to (id `d:` + key, named by the key, as document-derived entities). */
  entities: EpisodicNode[]
}

const DAY_MS = 86_400_000

export function deriveSession(
  conversation: string, session: ChatSession, turnVectors: readonly Float32Array[], anchored: ReadonlyArray<AnchoredTime | undefined>,
  named: readonly DerivedEntity[], options: SessionDerivationOptions = DEFAULT_SESSION_OPTIONS
): DerivedSession {
  const id = sessionEpisodeId(conversation, session.id)
  const turns = session.turns
  const cuts = topicBoundaries(turnVectors, options.segments)
  const starts = [0, ...cuts]
  const vectors = new Map<string, Float32Array>()
  const nodes: EpisodicNode[] = []
  const edges: EpisodicEdge[] = []
  const linked = new Map<string, EpisodicNode>()
  const stored: StoredTurn[] = []
  const sessionDay = Math.floor(session.time_ms / DAY_MS) * DAY_MS
  let mentionedStart = sessionDay
  let mentionedEnd = sessionDay + DAY_MS
  starts.forEach((from, k) => {
    const to = starts[k + 1] ?? turns.length
    const facetId = `${id}/s${k + 1}`
    const mean = meanOf(turnVectors, from, to)
    // the label is the segment's most central turn: the one closest to the segment's mean
    let central = from
    for (let t = from; t < to; t++) if (dot(turnVectors[t]!, mean) > dot(turnVectors[central]!, mean)) central = t
    const label = cut(turnText(turns[central]!), options.maxLabelLength)
    const anchor = cut(turns.slice(from, to).map(turnText).join('\n'), 2000)
    nodes.push({ id: facetId, type: 'Facet', name: label, search_text: label, anchor_text: anchor, created_at: turnTime(turns[from]!, session) })
    vectors.set(`Facet_search_text\u0000${facetId}`, mean)
    vectors.set(`Facet_anchor_text\u0000${facetId}`, mean)
    edges.push({ from: id, to: facetId, relationship_name: 'has_facet' })
    for (let t = from; t < to; t++) {
      const turn = turns[t]!
      const pointId = turnPointId(id, turn.id)
      const time = anchored[t]
      const text = turnText(turn)
      nodes.push({
        id: pointId, type: 'FacetPoint', name: text, search_text: text, created_at: turnTime(turn, session),
        ...(time ? { mentioned_time_start_ms: time.start_ms, mentioned_time_end_ms: time.end_ms, mentioned_time_confidence: time.confidence, mentioned_time_text: time.text } : {})
      })
      vectors.set(`FacetPoint_search_text\u0000${pointId}`, turnVectors[t]!)
      edges.push({ from: facetId, to: pointId, relationship_name: 'has_point' })
      stored.push({
        turn_id: turn.id, speaker: turn.speaker, text: turn.text, time: turn.time ?? session.time, time_ms: turnTime(turn, session), own_time: turn.time !== undefined,
        point: pointId, facet: facetId, ...(time ? { mentioned: time } : {})
      })
      if (time && time.end_ms - time.start_ms <= options.maxMentionedDays * DAY_MS) {
        mentionedStart = Math.min(mentionedStart, time.start_ms)
        mentionedEnd = Math.max(mentionedEnd, time.end_ms)
      }
    }
    const inSegment = new Set(turns.slice(from, to).map((t) => t.id))
    const facetNamed = named.filter((e) => e.chunk_ids.some((c) => inSegment.has(c)))
      .sort((a, b) => b.mentions - a.mentions || compare(a.key, b.key)).slice(0, options.entitiesPerFacet)
    for (const e of facetNamed) edges.push({ from: facetId, to: link(linked, e.key), relationship_name: 'involves_entity', edge_text: e.key })
  })
  const speakers = [...new Set(turns.map((t) => t.speaker))]
  for (const s of speakers) edges.push({ from: id, to: link(linked, nameKey(s)), relationship_name: 'involves_entity', edge_text: nameKey(s) })
  vectors.set(`Episode_summary\u0000${id}`, meanOf(turnVectors))
  const date = new Date(session.time_ms).toISOString().slice(0, 10)
  const summary = cut(`${date} ${speakers.join(', ')}: ${turns.map((t) => t.text).join(' ')}`, options.maxSummaryLength)
  const episode: EpisodicNode = {
    id, type: 'Episode', name: `${conversation} / ${session.id} (${session.time})`, summary,
    created_at: session.time_ms, mentioned_time_start_ms: mentionedStart, mentioned_time_end_ms: mentionedEnd,
    mentioned_time_confidence: 1, mentioned_time_text: session.time,
    derived_doc: conversationMarker(conversation), evidence: JSON.stringify(stored)
  }
  const graph: EpisodeGraph = { episode, nodes, edges }
  episode.derived_hash = createHash('sha256').update(JSON.stringify([graph, options])).digest('hex').slice(0, 24)
  return { graph, vectors, entities: [...linked.values()].sort((a, b) => compare(a.id, b.id)) }
}

function link(linked: Map<string, EpisodicNode>, k: string): string {
  const id = `d:${k}`
  if (!linked.has(id)) linked.set(id, { id, type: 'Entity', name: k })
  return id
}

const turnTime = (turn: ChatTurn, session: ChatSession): number => turn.time_ms ?? session.time_ms

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

function cut(text: string, max: number): string {
  const chars = [...text.trim()]
  return chars.length <= max ? chars.join('') : `${chars.slice(0, max - 1).join('')}…`
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
