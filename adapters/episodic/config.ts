import type { DisplayMode, Normalisation } from './types.js'

/** The collections searched by default (m-flow's, `Concept_name` included), without the deployment's prefix. */
const DEFAULT_COLLECTIONS: readonly string[] = [
  'Episode_summary',
  'Facet_search_text',
  'Facet_anchor_text',
  'FacetPoint_search_text',
  'Entity_name',
  'Concept_name',
  'RelationType_relationship_name'
]

export const RELATION_COLLECTION = 'RelationType_relationship_name'

/** The tuning constants, with m-flow's defaults. */
export interface EpisodicConfig {
  top_k: number
  wide_search_top_k: number
  max_relevant_ids: number
  triplet_distance_penalty: number
  edge_miss_cost: number
  hop_cost: number
  direct_episode_penalty: number
  max_facets_per_episode: number
  /** Plumbed through as upstream does; upstream never reads it. */
  max_points_per_facet: number
  display_mode: DisplayMode
  /** `query`: one min-max pool over every collection's hits (difference 6); `collection`: m-flow's rule. */
  normalisation: Normalisation
  collections: readonly string[]
  enable_hybrid_search: boolean
  hybrid_threshold: number
  keyword_match_bonus: number
  full_number_match_bonus: number
  partial_number_match_bonus: number
  english_match_bonus: number
  enable_adaptive_weights: boolean
  collection_baselines: Readonly<Record<string, number>>
  default_baseline: number
  ratio_good: number
  ratio_avg: number
  ratio_poor: number
  gap_trivial: number
  gap_low: number
  gap_high: number
  weight_clip_min: number
  weight_clip_max: number
  lambda_min: number
  lambda_max: number
  lambda_match_strong: number
  lambda_match_weak: number
  lambda_gap_high: number
  lambda_gap_mid: number
  lambda_semantic_boost: number
  lambda_semantic_mid: number
  exact_match_threshold_strong: number
  exact_match_threshold_weak: number
  semantic_threshold_excellent: number
  semantic_threshold_good: number
  struct_decay_factor: number
  enable_time_bonus: boolean
  time_bonus_max: number
  time_bonus_bundle: number
  time_score_floor: number
  time_conf_min: number
  time_mentioned_weight: number
  time_created_at_weight: number
  time_wide_multiplier: number
  time_wide_cap: number
  enable_mismatch_penalty: boolean
  mismatch_penalty_max: number
  mismatch_conf_threshold: number
  mismatch_require_candidate_time: boolean
  wide_range_penalty_days: number
  wide_range_min_weight: number
  /** Query times are read in this offset (UTC+8), as upstream's parser does. */
  tz_offset_hours: number
}

export const DEFAULT_EPISODIC_CONFIG: Readonly<EpisodicConfig> = Object.freeze({
  top_k: 10,
  wide_search_top_k: 100,
  max_relevant_ids: 300,
  triplet_distance_penalty: 3.5,
  edge_miss_cost: 0.9,
  hop_cost: 0.05,
  direct_episode_penalty: 0.3,
  max_facets_per_episode: 4,
  max_points_per_facet: 8,
  display_mode: 'summary',
  normalisation: 'query',
  collections: DEFAULT_COLLECTIONS,
  enable_hybrid_search: true,
  hybrid_threshold: 3,
  keyword_match_bonus: 0.15,
  full_number_match_bonus: 0.12,
  partial_number_match_bonus: 0.03,
  english_match_bonus: 0.08,
  enable_adaptive_weights: true,
  collection_baselines: Object.freeze({
    FacetPoint_search_text: 0.5,
    Facet_search_text: 0.6,
    Facet_anchor_text: 0.6,
    RelationType_relationship_name: 0.56,
    Entity_name: 0.68,
    Concept_name: 0.68,
    Episode_summary: 1.06
  }),
  default_baseline: 0.7,
  ratio_good: 0.5,
  ratio_avg: 1.0,
  ratio_poor: 1.5,
  gap_trivial: 0.01,
  gap_low: 0.05,
  gap_high: 0.15,
  weight_clip_min: 0.2,
  weight_clip_max: 0.8,
  lambda_min: 0.3,
  lambda_max: 0.95,
  lambda_match_strong: 0.2,
  lambda_match_weak: 0.1,
  lambda_gap_high: 0.15,
  lambda_gap_mid: 0.1,
  lambda_semantic_boost: 0.3,
  lambda_semantic_mid: 0.15,
  exact_match_threshold_strong: 0.1,
  exact_match_threshold_weak: 0.05,
  semantic_threshold_excellent: 0.1,
  semantic_threshold_good: 0.2,
  struct_decay_factor: 0.5,
  enable_time_bonus: true,
  time_bonus_max: 0.06,
  time_bonus_bundle: 0.04,
  time_score_floor: 0.08,
  time_conf_min: 0.4,
  time_mentioned_weight: 1.0,
  time_created_at_weight: 0.5,
  time_wide_multiplier: 2.0,
  time_wide_cap: 300,
  enable_mismatch_penalty: false,
  mismatch_penalty_max: 0.03,
  mismatch_conf_threshold: 0.7,
  mismatch_require_candidate_time: true,
  wide_range_penalty_days: 365,
  wide_range_min_weight: 0.3,
  tz_offset_hours: 8
})

/** A numeric constant a request may override, with its allowed closed range. */
interface NumericOption {
  name: keyof EpisodicConfig
  integer: boolean
  min: number
  max: number
  description: string
}

/**
 * The constants a `POST /retrieve` body may override for the episodic mode, with sane ranges.
 * Scores live on the normalised [0, 1] scale, so the cost constants are bounded by a few units.
 */
const EPISODIC_NUMERIC_OPTIONS: readonly NumericOption[] = [
  { name: 'wide_search_top_k', integer: true, min: 1, max: 1000, description: 'Per-collection vector limit (default 100).' },
  { name: 'max_relevant_ids', integer: true, min: 1, max: 5000, description: 'Projection phase-1 cap; phase 2 takes twice as many (default 300).' },
  { name: 'edge_miss_cost', integer: false, min: 0, max: 10, description: 'Cost of an edge whose label was not retrieved (default 0.9).' },
  { name: 'hop_cost', integer: false, min: 0, max: 10, description: 'Cost added per hop (default 0.05).' },
  { name: 'direct_episode_penalty', integer: false, min: 0, max: 10, description: 'Added to a direct Episode summary hit (default 0.3).' },
  { name: 'triplet_distance_penalty', integer: false, min: 0, max: 10, description: 'Default node cost in the detail-mode edge sort (default 3.5).' },
  { name: 'max_facets_per_episode', integer: true, min: 1, max: 50, description: 'Facets shown per Episode in detail and highly_related_summary (default 4).' },
  { name: 'max_points_per_facet', integer: true, min: 1, max: 50, description: 'Accepted for parity with m-flow; it has no effect there either (default 8).' },
  { name: 'hybrid_threshold', integer: true, min: 0, max: 100, description: 'A query whose core is at most this many characters gets the keyword bonus (default 3).' },
  { name: 'keyword_match_bonus', integer: false, min: 0, max: 1, description: 'Keyword bonus subtracted from a hit score (default 0.15).' },
  { name: 'full_number_match_bonus', integer: false, min: 0, max: 1, description: 'Exact bonus per fully matched number (default 0.12).' },
  { name: 'partial_number_match_bonus', integer: false, min: 0, max: 1, description: 'Exact bonus per number matched without its unit (default 0.03).' },
  { name: 'english_match_bonus', integer: false, min: 0, max: 1, description: 'Exact bonus per matched English word, capped at twice this (default 0.08).' },
  { name: 'time_bonus_bundle', integer: false, min: 0, max: 1, description: 'Largest time bonus subtracted from a bundle cost (default 0.04).' },
  { name: 'time_bonus_max', integer: false, min: 0, max: 1, description: 'Largest time bonus in the detail-mode edge sort (default 0.06).' },
  { name: 'time_score_floor', integer: false, min: 0, max: 1, description: 'A time bonus never takes a cost below this (default 0.08).' },
  { name: 'time_conf_min', integer: false, min: 0, max: 1, description: 'Minimum confidence of a query time for it to count (default 0.4).' },
  { name: 'time_wide_multiplier', integer: false, min: 1, max: 10, description: 'Vector limit multiplier when the query has a time (default 2).' },
  { name: 'time_wide_cap', integer: true, min: 1, max: 1000, description: 'Cap of the widened vector limit (default 300).' }
]

const EPISODIC_BOOLEAN_OPTIONS: ReadonlyArray<keyof EpisodicConfig> = [
  'enable_hybrid_search',
  'enable_time_bonus',
  'enable_adaptive_weights',
  'enable_mismatch_penalty'
]

const DISPLAY_MODES: readonly DisplayMode[] = ['summary', 'highly_related_summary', 'detail']
export const NORMALISATIONS: readonly Normalisation[] = ['query', 'collection']

/** The string options taking one of a fixed list of values, with that list (in the order checked and documented). */
const EPISODIC_ENUM_OPTIONS: Readonly<{ display_mode: readonly DisplayMode[]; normalisation: readonly Normalisation[] }> = {
  display_mode: DISPLAY_MODES,
  normalisation: NORMALISATIONS
}

const ENUM_OPTION_DESCRIPTIONS: Readonly<Record<keyof typeof EPISODIC_ENUM_OPTIONS, string>> = {
  display_mode: 'Episodic output: `summary` (default), `highly_related_summary` or `detail`.',
  normalisation: 'How vector distances become the 0..1 scores every cost is built on (min-max). `query` (default): one ' +
    'pool of every hit that every collection returned for this question, so a weak collection stays weak. ' +
    '`collection`: m-flow\'s rule, each collection on its own, so the best hit of every collection scores 0 ' +
    'however far it is; use it to reproduce m-flow results. Each item\'s `metadata.normalisation` says which rule scored it.'
}

/** Thrown for an override outside its range; the message names the option. */
export class EpisodicOptionError extends Error {
  override name = 'EpisodicOptionError'
}

/**
 * Merges overrides into the defaults, checking each: numbers must be finite and inside the option's
 * range, integers whole, booleans boolean, `display_mode` one of the three, `normalisation` one of the two. Unknown keys and `undefined`
 * values are ignored. Throws {@link EpisodicOptionError} naming the first bad option.
 */
export function resolveEpisodicConfig(
  overrides: Partial<Record<string, unknown>> = {},
  base: Readonly<EpisodicConfig> = DEFAULT_EPISODIC_CONFIG
): EpisodicConfig {
  const cfg: EpisodicConfig = { ...base }
  const out = cfg as unknown as Record<string, unknown>
  for (const option of EPISODIC_NUMERIC_OPTIONS) {
    const value = overrides[option.name]
    if (value === undefined || value === null) continue
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new EpisodicOptionError(`${option.name} must be a number`)
    if (option.integer && !Number.isInteger(value)) throw new EpisodicOptionError(`${option.name} must be an integer`)
    if (value < option.min || value > option.max) {
      throw new EpisodicOptionError(`${option.name} must be between ${option.min} and ${option.max}`)
    }
    out[option.name] = value
  }
  for (const name of EPISODIC_BOOLEAN_OPTIONS) {
    const value = overrides[name]
    if (value === undefined || value === null) continue
    if (typeof value !== 'boolean') throw new EpisodicOptionError(`${name} must be a boolean`)
    out[name] = value
  }
  const topK = overrides['top_k']
  if (topK !== undefined && topK !== null) {
    if (typeof topK !== 'number' || !Number.isInteger(topK) || topK < 1 || topK > 100) {
      throw new EpisodicOptionError('top_k must be an integer between 1 and 100')
    }
    cfg.top_k = topK
  }
  for (const [name, values] of Object.entries(EPISODIC_ENUM_OPTIONS) as Array<[string, readonly string[]]>) {
    const value = overrides[name]
    if (value === undefined || value === null) continue
    if (typeof value !== 'string' || !values.includes(value)) {
      throw new EpisodicOptionError(`${name} must be one of ${values.join(', ')}`)
    }
    out[name] = value
  }
  const collections = overrides['collections']
  if (collections !== undefined && collections !== null) {
    if (!Array.isArray(collections) || collections.some((c) => typeof c !== 'string')) {
      throw new EpisodicOptionError('collections must be a list of collection names')
    }
    cfg.collections = collections as string[]
  }
  return cfg
}

/**
 * JSON Schema properties for the episodic request options (for the `POST /retrieve` body schema):
 * `display_mode`, `normalisation`, the numeric constants with their ranges and defaults, and the boolean switches.
 */
export function episodicOptionProperties(): Record<string, Record<string, unknown>> {
  const props: Record<string, Record<string, unknown>> = {}
  for (const name of Object.keys(EPISODIC_ENUM_OPTIONS) as Array<keyof typeof EPISODIC_ENUM_OPTIONS>) {
    props[name] = {
      type: 'string', enum: [...EPISODIC_ENUM_OPTIONS[name]], default: DEFAULT_EPISODIC_CONFIG[name],
      description: ENUM_OPTION_DESCRIPTIONS[name]
    }
  }
  for (const o of EPISODIC_NUMERIC_OPTIONS) {
    props[o.name] = {
      type: o.integer ? 'integer' : 'number', minimum: o.min, maximum: o.max,
      default: DEFAULT_EPISODIC_CONFIG[o.name], description: o.description
    }
  }
  for (const name of EPISODIC_BOOLEAN_OPTIONS) {
    props[name] = { type: 'boolean', default: DEFAULT_EPISODIC_CONFIG[name], description: `Episodic switch (default ${String(DEFAULT_EPISODIC_CONFIG[name])}).` }
  }
  return props
}
