/**
 * Output assembly in the three display modes: the rendered Episode blocks, and in
 * `detail` mode the explaining edges, globally ordered as upstream orders them.
 */
import { adaptiveEdgeScore, type AdaptiveContext } from './adaptive.js'
import { edgeCost } from './bundle-scoring.js'
import type { EpisodicConfig } from './config.js'
import { edgeOf, type RelationshipIndex } from './relationship-index.js'
import { computeTimeMatch, lowerByTimeBonus, timeApplies } from './time-bonus.js'
import type { EpisodeBundle, EpisodicEdge, EpisodicNode, QueryTime } from './types.js'

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const MONTH_WORD = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?'
const EXPLICIT_DATE = new RegExp(
  [
    '\\d{4}-\\d{1,2}-\\d{1,2}',
    '\\d{4}年\\d{1,2}月\\d{1,2}[日号]?',
    `${MONTH_WORD}\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}`,
    `\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH_WORD},?\\s+\\d{4}`
  ].join('|'),
  'i'
)

/** Python's `strftime('%B %d, %Y')` in UTC, e.g. `May 07, 2023`. */
function formatLongDate(ms: number): string {
  const d = new Date(ms)
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, '0')}, ${d.getUTCFullYear()}`
}

/** Upstream `_format_episode_time`: the first of these that exists, or `null`. */
export function formatEpisodeTime(node: EpisodicNode): string | null {
  const text = node.mentioned_time_text?.trim() ?? ''
  if (text !== '' && EXPLICIT_DATE.test(text)) return text
  if (typeof node.mentioned_time_start_ms === 'number') return formatLongDate(node.mentioned_time_start_ms)
  if (text !== '') return text
  if (typeof node.created_at === 'number') {
    const ms = node.created_at > 1e12 ? node.created_at : node.created_at * 1000
    return `${formatLongDate(ms)} (recorded)`
  }
  return null
}

/** One Episode block: `[time] [name]` then a newline and the display text. */
function renderEpisodeBlock(node: EpisodicNode, display: string): string {
  const time = formatEpisodeTime(node)
  const header = [time ? `[${time}]` : null, node.name ? `[${node.name}]` : null].filter((x) => x !== null).join(' ')
  return header === '' ? display : `${header}\n${display}`
}

const BLOCK_SEPARATOR = '\n\n---\n\n'

/** Splits a summary on `【title】` markers; text before the first marker has no title. */
function splitSummarySections(summary: string): Array<{ title: string | null; body: string }> {
  const sections: Array<{ title: string | null; body: string }> = []
  const re = /【([^】]*)】/gu
  let last = 0
  let title: string | null = null
  for (const m of summary.matchAll(re)) {
    const at = m.index ?? 0
    if (at > last || title !== null) sections.push({ title, body: summary.slice(last, at) })
    title = m[1] ?? ''
    last = at + m[0].length
  }
  sections.push({ title, body: summary.slice(last) })
  return sections.filter((s) => s.title !== null || s.body.trim() !== '')
}

/** The `highly_related_summary` filter: the sections whose title is a matched facet name, else the whole summary. */
export function filterSummary(summary: string, matchedNames: ReadonlySet<string>): string {
  const sections = splitSummarySections(summary)
  if (!sections.some((s) => s.title !== null) || matchedNames.size === 0) return summary
  const kept = sections
    .filter((s) => s.title !== null && matchedNames.has(s.title.trim().toLowerCase()))
    .map((s) => `【${s.title}】${s.body.trim()}`)
  return kept.length === 0 ? summary : kept.join(' ')
}

export interface OutputContext {
  /** The scored index, its nodes carrying every display property. */
  index: RelationshipIndex
  /** The shown Episodes' edges with their texts and descriptions, by {@link edgeKey}, where the index's edges lack them. */
  described?: ReadonlyMap<string, EpisodicEdge>
  bestById: ReadonlyMap<string, number>
  edgeHitMap: ReadonlyMap<string, number>
  cfg: EpisodicConfig
  time: QueryTime | null
  adaptive: AdaptiveContext | null
}

/** An explaining edge of `detail` mode. */
interface DetailEdge {
  episode_id: string
  from: string
  to: string
  relationship_name: string
  edge_text: string | null
  /** An entity link's own description (difference 7), else null. */
  description: string | null
  /** The sort key that ordered it (adaptive `final`, or the basic key's node cost). */
  sort_score: number
}

interface AssembledBundle {
  bundle: EpisodeBundle
  rank: number
  node: EpisodicNode
  /** The text shown: summary, filtered summary, or summary plus edge lines in `detail`. */
  display: string
  block: string
  edges: DetailEdge[]
}

export interface AssembledOutput {
  bundles: AssembledBundle[]
  text: string
  /** `detail` mode only: every explaining edge in the global order. */
  edges: DetailEdge[]
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** One key per stored edge: its ends as stored and its relationship. */
export const edgeKey = (e: Pick<EpisodicEdge, 'from' | 'to' | 'relationship_name'>): string => `${e.from}\u0000${e.to}\u0000${e.relationship_name}`

/** `_compute_facet_cost` of `bundle_search.py`: no entity term and no discount. */
function facetCostOut(f: string, ctx: OutputContext): number {
  const d = (id: string): number => ctx.bestById.get(id) ?? Infinity
  let cost = d(f)
  for (const [p, edge] of ctx.index.points_by_facet.get(f) ?? []) {
    const c = d(p) + edgeCost(edge, ctx.edgeHitMap, ctx.cfg.edge_miss_cost) + ctx.cfg.hop_cost
    if (c < cost) cost = c
  }
  return cost
}

/** `_get_top_facets`: the Episode's facets by `facet_cost_out + ec + H`, infinite ones last. */
function topFacets(episodeId: string, ctx: OutputContext): string[] {
  const facets = [...(ctx.index.facets_by_episode.get(episodeId) ?? [])]
  const scored = facets.map(([f, edge]) => {
    const ec = edgeCost(edge, ctx.edgeHitMap, ctx.cfg.edge_miss_cost)
    return { f, cost: facetCostOut(f, ctx) + ec + ctx.cfg.hop_cost }
  })
  scored.sort((a, b) => {
    const fa = Number.isFinite(a.cost)
    const fb = Number.isFinite(b.cost)
    if (fa !== fb) return fa ? -1 : 1
    return (fa ? a.cost - b.cost : 0) || byId(a.f, b.f)
  })
  return scored.slice(0, ctx.cfg.max_facets_per_episode).map((s) => s.f)
}

/** `_get_top_entities`: the two cheapest hit entities, through the Episode edge if there is one. */
function topEntities(episodeId: string, ctx: OutputContext): EpisodicEdge[] {
  const d = (id: string): number => ctx.bestById.get(id) ?? Infinity
  const ec = (e: EpisodicEdge): number => edgeCost(e, ctx.edgeHitMap, ctx.cfg.edge_miss_cost)
  const H = ctx.cfg.hop_cost
  const best = new Map<string, { cost: number; edge: EpisodicEdge; direct: boolean }>()
  for (const [n, edge] of ctx.index.entities_by_episode.get(episodeId) ?? []) {
    if (!Number.isFinite(d(n))) continue
    best.set(n, { cost: d(n) + ec(edge) + H, edge, direct: true })
  }
  for (const f of ctx.index.facets_by_episode.get(episodeId)?.keys() ?? []) {
    for (const [n, edge] of ctx.index.entities_by_facet.get(f) ?? []) {
      if (!Number.isFinite(d(n)) || best.has(n)) continue
      best.set(n, { cost: d(n) + ec(edge) + 2 * H, edge, direct: false })
    }
  }
  return [...best.entries()]
    .sort((a, b) => a[1].cost - b[1].cost || byId(a[0], b[0]))
    .slice(0, 2)
    .map(([, v]) => v.edge)
}

const EDGE_PRIORITY: Readonly<Record<string, number>> = { has_point: 1, has_facet: 2, involves_entity: 3 }

function nodeText(node: EpisodicNode | undefined): string {
  if (!node) return ''
  if (node.type === 'Facet') return node.description || node.anchor_text || node.search_text || node.name || node.id
  if (node.type === 'FacetPoint') return node.description || node.search_text || node.name || node.id
  if (node.type === 'Entity') return node.description ? `${node.name ?? node.id}: ${node.description}` : node.name ?? node.id
  return node.name ?? node.id
}

/**
 * Assembles the top bundles, in rank order, in `cfg.display_mode`.
 */
export function assembleOutput(top: readonly EpisodeBundle[], ctx: OutputContext): AssembledOutput {
  const { index, cfg } = ctx
  const assembled: AssembledBundle[] = []
  top.forEach((bundle, rank) => {
    const node = index.nodes.get(bundle.episode_id) ?? { id: bundle.episode_id, type: 'Episode' }
    const summary = node.summary ?? ''
    let display = summary
    if (cfg.display_mode === 'highly_related_summary') {
      const names = new Set<string>()
      const facetName = (id: string | null): void => {
        const n = id ? index.nodes.get(id) : undefined
        const name = n?.name ?? n?.search_text
        if (name) names.add(name.trim().toLowerCase())
      }
      facetName(bundle.best_facet_id)
      for (const f of topFacets(bundle.episode_id, ctx)) facetName(f)
      display = filterSummary(summary, names)
    }
    assembled.push({ bundle, rank, node, display, block: renderEpisodeBlock(node, display), edges: [] })
  })

  let edges: DetailEdge[] = []
  if (cfg.display_mode === 'detail') {
    edges = detailEdges(assembled, ctx)
    for (const a of assembled) {
      a.edges = edges.filter((e) => e.episode_id === a.bundle.episode_id)
      const lines = a.edges.map((e) => {
        const other = e.from === a.bundle.episode_id ? e.to : e.from
        return `- ${e.relationship_name}: ${e.edge_text ?? ''} | ${nodeText(index.nodes.get(other))}`
      })
      a.display = lines.length > 0 ? `${a.display}\n${lines.join('\n')}` : a.display
      a.block = renderEpisodeBlock(a.node, a.display)
    }
  }
  return { bundles: assembled, text: assembled.map((a) => a.block).join(BLOCK_SEPARATOR), edges }
}

function detailEdges(assembled: readonly AssembledBundle[], ctx: OutputContext): DetailEdge[] {
  const { index, cfg } = ctx
  const seen = new Set<string>()
  const rows: Array<{ edge: EpisodicEdge; episode: string; rank: number }> = []
  const push = (edge: EpisodicEdge | undefined, episode: string, rank: number): void => {
    if (!edge) return
    const [a, b] = [edge.from, edge.to].sort(byId)
    const key = `${a}\u0000${b}\u0000${edge.relationship_name}`
    if (seen.has(key)) return
    seen.add(key)
    rows.push({ edge, episode, rank })
  }
  for (const { bundle, rank } of assembled) {
    const e = bundle.episode_id
    if (bundle.best_facet_id) push(edgeOf(index.facets_by_episode, e, bundle.best_facet_id), e, rank)
    if (bundle.best_entity_id) {
      push(edgeOf(index.entities_by_episode, e, bundle.best_entity_id), e, rank)
      if (bundle.best_path === 'facet_entity' && bundle.best_facet_id) {
        push(edgeOf(index.entities_by_facet, bundle.best_facet_id, bundle.best_entity_id), e, rank)
      }
    }
    for (const f of topFacets(e, ctx)) push(edgeOf(index.facets_by_episode, e, f), e, rank)
    for (const edge of topEntities(e, ctx)) push(edge, e, rank)
  }

  const bundleScore = new Map(assembled.map((a) => [a.bundle.episode_id, a.bundle.score] as const))
  const d = (id: string, fallback: number): number => ctx.bestById.get(id) ?? fallback
  const basicNodeCost = (id: string): number => {
    const n = index.nodes.get(id)
    if (n?.type === 'Facet') {
      const c = facetCostOut(id, ctx)
      return Number.isFinite(c) ? c : 1.5
    }
    if (n?.type === 'Episode' && bundleScore.has(id)) return bundleScore.get(id)!
    return d(id, 1.5)
  }
  const time = timeApplies(ctx.time, cfg) ? ctx.time : null
  const timeBonus = (edge: EpisodicEdge): number => {
    if (!time) return 0
    let best = 0
    for (const id of [edge.from, edge.to]) {
      const n = index.nodes.get(id)
      if (n) best = Math.max(best, computeTimeMatch(n, time, cfg, cfg.time_bonus_max).bonus)
    }
    return best
  }
  const keyed = rows.map((row) => {
    const ec = edgeCost(row.edge, ctx.edgeHitMap, cfg.edge_miss_cost)
    const priority = EDGE_PRIORITY[row.edge.relationship_name] ?? 4
    const node1 = row.edge.from
    let primary: number
    let second = 0
    if (cfg.enable_adaptive_weights && ctx.adaptive) {
      const node = Math.min(d(row.edge.from, cfg.triplet_distance_penalty), d(row.edge.to, cfg.triplet_distance_penalty))
      primary = adaptiveEdgeScore(node, ec, row.rank, ctx.adaptive, cfg)
    } else {
      primary = row.rank
      second = Math.min(basicNodeCost(row.edge.from), basicNodeCost(row.edge.to))
    }
    const bonus = timeBonus(row.edge)
    // The same floor rule as the bundle bonus (difference 4): a time bonus never raises a key.
    if (cfg.enable_adaptive_weights && ctx.adaptive) primary = lowerByTimeBonus(primary, bonus, cfg.time_score_floor)
    else second = lowerByTimeBonus(second, bonus, cfg.time_score_floor)
    return { row, primary, second, ec, priority, node1 }
  })
  keyed.sort((a, b) =>
    a.primary - b.primary || a.second - b.second || (cfg.enable_adaptive_weights && ctx.adaptive ? 0 : a.ec - b.ec) ||
    a.priority - b.priority || byId(a.node1, b.node1))
  return keyed.map((k) => {
    const full = ctx.described?.get(edgeKey(k.row.edge)) ?? k.row.edge
    return {
      episode_id: k.row.episode,
      from: k.row.edge.from,
      to: k.row.edge.to,
      relationship_name: k.row.edge.relationship_name,
      edge_text: full.edge_text ?? null,
      description: full.description ?? null,
      sort_score: cfg.enable_adaptive_weights && ctx.adaptive ? k.primary : k.second
    }
  })
}
