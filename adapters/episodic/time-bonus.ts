/** Time match and the bundle time bonus (m-flow's); difference 4 (docs/episodic.md): it never raises a cost. */
import type { EpisodicConfig } from './config.js'
import type { EpisodeBundle, EpisodicNode, QueryTime } from './types.js'

const DAY_MS = 86_400_000

export interface TimeMatch {
  /** Subtracted from a cost; in [0, bonusMax]. */
  bonus: number
  /** Added to a cost when the mismatch penalty is enabled. */
  penalty: number
}

/** True when a query time is confident enough to count (`has_time` and conf >= `time_conf_min`). */
export function timeApplies(time: QueryTime | null, cfg: Pick<EpisodicConfig, 'time_conf_min'>): time is QueryTime {
  return time !== null && time.has_time && time.confidence >= cfg.time_conf_min
}

/** Upstream `compute_time_match` for one candidate node, with `bonusMax` as the cap. */
export function computeTimeMatch(node: EpisodicNode, time: QueryTime, cfg: EpisodicConfig, bonusMax: number): TimeMatch {
  const none = { bonus: 0, penalty: 0 }
  if (!cfg.enable_time_bonus || time.start_ms === null || time.end_ms === null) return none
  if (time.confidence < cfg.time_conf_min) return none
  const qStart = time.start_ms
  const qEnd = time.end_ms
  let match = 0
  const cStart = node.mentioned_time_start_ms
  const cEnd = node.mentioned_time_end_ms
  const hasMentioned = typeof cStart === 'number' && typeof cEnd === 'number'
  if (hasMentioned) {
    const overlapStart = Math.max(cStart, qStart)
    const overlapEnd = Math.min(cEnd, qEnd)
    const overlap = overlapStart >= overlapEnd ? 0 : overlapEnd - overlapStart
    const score = Math.min(1, overlap / Math.max(1, Math.min(cEnd - cStart, qEnd - qStart)))
    // A missing confidence crashes upstream; we read it as upstream's default 0.7.
    match = score * (node.mentioned_time_confidence ?? 0.7) * cfg.time_mentioned_weight
  }
  const created = node.created_at
  if (match === 0 && typeof created === 'number' && qStart <= created && created <= qEnd) match = cfg.time_created_at_weight
  const durationDays = (qEnd - qStart) / DAY_MS
  if (durationDays > cfg.wide_range_penalty_days) match *= Math.max(cfg.wide_range_min_weight, cfg.wide_range_penalty_days / durationDays)
  match *= time.confidence
  const bonus = Math.min(bonusMax, match * bonusMax)
  let penalty = 0
  if (cfg.enable_mismatch_penalty && bonus === 0 && time.confidence >= cfg.mismatch_conf_threshold) {
    const candidateHasTime = hasMentioned || typeof created === 'number'
    if (candidateHasTime) penalty = cfg.mismatch_penalty_max * time.confidence
    else if (!cfg.mismatch_require_candidate_time) penalty = cfg.mismatch_penalty_max * 0.5 * time.confidence
  }
  return { bonus, penalty }
}

/**
 * Lowers a cost by a time bonus. Difference 4: the floor never raises a cost; a cost already at or
 * below the floor is left unchanged (upstream's `max(floor, cost - bonus)` lifts 0.05 to 0.08).
 */
export function lowerByTimeBonus(cost: number, bonus: number, floor: number): number {
  if (bonus <= 0 || cost <= floor) return cost
  return Math.max(floor, cost - bonus)
}

/** Upstream `_apply_time_bonus_to_bundles`, using the Episode node's own time fields. Returns new bundles. */
export function applyTimeBonusToBundles(
  bundles: readonly EpisodeBundle[],
  nodes: ReadonlyMap<string, EpisodicNode>,
  time: QueryTime,
  cfg: EpisodicConfig
): EpisodeBundle[] {
  return bundles.map((b) => {
    const node = nodes.get(b.episode_id)
    if (!node) return b
    const m = computeTimeMatch(node, time, cfg, cfg.time_bonus_bundle)
    if (m.bonus > 0) return { ...b, score: lowerByTimeBonus(b.score, m.bonus, cfg.time_score_floor) }
    if (m.penalty > 0) return { ...b, score: b.score + m.penalty }
    return b
  })
}
