/**
 * What a conversation session's Episode keeps of each turn, in its `evidence` (a JSON array; docs/conversations.md):
 * written by the conversations applier, read by episodic to answer `metadata.turns` and by `/context` to pack them.
 */

/** A time expression of a turn, anchored to the turn's (else the session's) time. */
export interface AnchoredTime {
  text: string
  start_ms: number
  end_ms: number
  confidence: number
}

export interface StoredTurn {
  turn_id: string
  speaker: string
  text: string
  /** As sent on the turn (`own_time`), else the session's. */
  time: string
  time_ms: number
  own_time: boolean
  /** The FacetPoint drawn from the turn, and the Facet (topic segment) that holds it. */
  point: string
  facet: string
  mentioned?: AnchoredTime
}

/** The turns an Episode's `evidence` holds when it is a conversation session's; empty otherwise. */
export function storedTurnsOf(node: { evidence?: string | null } | undefined): StoredTurn[] {
  if (!node?.evidence) return []
  try {
    const value: unknown = JSON.parse(node.evidence)
    return Array.isArray(value) ? value.filter((t): t is StoredTurn => typeof t === 'object' && t !== null && typeof (t as StoredTurn).turn_id === 'string') : []
  } catch {
    return []
  }
}
