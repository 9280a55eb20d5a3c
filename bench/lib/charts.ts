/**
 * Plain SVG charts from bench/results/*.json: latency per mode by corpus size, and quality per leg.
 * The readers expect the shapes the benches write today but take only what they find: a file, a row or
 * a figure of another shape is skipped (and named in `skipped`), never a reason to fail.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

/** One results file: its name (e.g. `hybrid.json`) and its parsed content. */
export interface ResultsFile {
  name: string
  data: Json
}

interface LatencyPoint {
  /** Corpus size in the mode's own unit (chunks, entities, Episodes). */
  size: number
  p50Ms: number
  file: string
}

export interface LatencySeries {
  label: string
  points: LatencyPoint[]
}

export interface QualityRow {
  name: string
  figures: Record<string, number>
}

/** Where the figures came from, for the chart's footer: file, date, machine and load. */
export interface Provenance {
  file: string
  date?: string
  machine?: string
  load?: string
}

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: Json | undefined): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
const at = (v: Json | undefined, ...path: string[]): Json | undefined => {
  let cur = v
  for (const key of path) cur = isObject(cur) ? cur[key] : undefined
  return cur
}
/** A `results` field as a list of objects, whether the bench wrote an array or an object keyed by run. */
const rowsOf = (data: Json): JsonObject[] => {
  const results = at(data, 'results')
  const rows = Array.isArray(results) ? results : isObject(results) ? Object.values(results) : []
  return rows.filter(isObject)
}

interface LatencyReader {
  file: RegExp
  /** Series label (mode, backend, what was timed) and the point of one row, or undefined to skip the row. */
  read(row: JsonObject): { label: string; size: number; p50Ms: number } | undefined
}

const point = (label: string, size: number | undefined, p50Ms: number | undefined) =>
  size !== undefined && p50Ms !== undefined && size > 0 && p50Ms > 0 ? { label, size, p50Ms } : undefined

const READERS: LatencyReader[] = [
  {
    file: /^hybrid.*\.json$/,
    read: (r) => point('hybrid, embedded (chunks; over HTTP, one client)', num(r.chunks), num(at(r, 'c1', 'total_ms', 'p50')) ?? num(at(r, 'c1', 'server_took_ms', 'p50')))
  },
  {
    file: /^graphrag.*\.json$/,
    read: (r) => point(`graphrag, ${r.backend === 'neo4j' ? 'Neo4j' : 'embedded'} (entities; in process)`, num(r.entities), num(r.p50_ms))
  },
  {
    file: /^episodic.*\.json$/,
    read: (r) => point(`episodic, ${r.graph === 'neo4j' ? 'Neo4j' : 'embedded'} graph (Episodes; in process, with the query embedding)`,
      num(r.episodes), num(at(r, 'retrieve_including_embedding', 'p50_ms')))
  }
]

/** The date a results file says it was written. */
const dateOf = (data: Json): string | undefined => {
  for (const key of ['date', 'at', 'started', 'started_at']) {
    const v = at(data, key)
    if (typeof v === 'string') return v
  }
  return undefined
}

/**
 * Latency series from every file a reader knows. Where two files give the same series a point at the
 * same size, the newer file wins (a re-run on a quieter machine replaces the earlier figure).
 */
export function readLatency(files: readonly ResultsFile[]): { series: LatencySeries[]; used: string[]; skipped: string[] } {
  const best = new Map<string, Map<number, LatencyPoint & { date: string }>>()
  const used = new Set<string>()
  const skipped: string[] = []
  for (const file of files) {
    const reader = READERS.find((r) => r.file.test(file.name))
    if (!reader) continue
    const date = dateOf(file.data) ?? ''
    let found = 0
    for (const row of rowsOf(file.data)) {
      const p = reader.read(row)
      if (!p) continue
      found++
      const series = best.get(p.label) ?? new Map()
      const previous = series.get(p.size)
      if (!previous || previous.date <= date) series.set(p.size, { size: p.size, p50Ms: p.p50Ms, file: file.name, date })
      best.set(p.label, series)
    }
    if (found === 0) skipped.push(`${file.name}: no latency rows of a known shape`)
  }
  const series = [...best.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([label, points]) => ({
    label,
    points: [...points.values()].sort((a, b) => a.size - b.size).map(({ size, p50Ms, file }) => {
      used.add(file)
      return { size, p50Ms, file }
    })
  }))
  return { series, used: [...used].sort(), skipped }
}

/** The quality harness's rows that run one configuration at its defaults: each leg alone, and hybrid. */
export function readQuality(files: readonly ResultsFile[]): { rows: QualityRow[]; used: string[]; skipped: string[] } {
  const rows: QualityRow[] = []
  const used: string[] = []
  const skipped: string[] = []
  for (const file of files.filter((f) => /^quality.*\.json$/.test(f.name))) {
    const list = at(file.data, 'rows')
    let found = 0
    for (const row of Array.isArray(list) ? list.filter(isObject) : []) {
      const settings = at(row, 'settings')
      // Sweeps (rrf_k, window, weights) are left out: the chart compares legs at their defaults.
      const defaults = !isObject(settings) || Object.keys(settings).every((k) => k === 'legs')
      const figures = at(row, 'figures')
      if (typeof row.name !== 'string' || !defaults || !isObject(figures)) continue
      const numeric = Object.fromEntries(Object.entries(figures).flatMap(([k, v]) => (k !== 'queries' && num(v) !== undefined ? [[k, v as number]] : [])))
      if (Object.keys(numeric).length === 0) continue
      rows.push({ name: row.name, figures: numeric })
      found++
    }
    if (found > 0) used.push(file.name)
    else skipped.push(`${file.name}: no quality rows of a known shape`)
  }
  return { rows, used, skipped }
}

/** What a results file says about the machine and its load, in one line. */
export function provenance(file: ResultsFile): Provenance {
  const m = at(file.data, 'machine')
  let machine: string | undefined
  if (typeof m === 'string') machine = m
  else if (isObject(m)) {
    const cpus = num(m.cpus)
    const cpu = typeof m.cpu === 'string' ? m.cpu : typeof m.cpu_model === 'string' ? m.cpu_model : undefined
    const memory = num(m.memory_gib) ?? num(m.memory_gb)
    machine = [cpus !== undefined ? `${cpus} cores` : '', cpu ?? '', memory !== undefined ? `${Math.round(memory)} GiB` : '', typeof m.node === 'string' ? `Node ${m.node}` : '']
      .filter(Boolean).join(', ')
  }
  const loads = at(file.data, 'load_average_1_5_15') ?? at(m ?? null, 'load_average_before')
  let load: string | undefined
  if (Array.isArray(loads)) {
    const firsts = loads.map((l) => (Array.isArray(l) ? num(l[0]) : num(l))).filter((x): x is number => x !== undefined)
    if (firsts.length > 0) load = `load average (1 min) ${Math.min(...firsts)}–${Math.max(...firsts)}`
  }
  const date = dateOf(file.data)
  return { file: file.name, ...(date ? { date: date.slice(0, 10) } : {}), ...(machine ? { machine } : {}), ...(load ? { load } : {}) }
}

/** Maps [d0, d1] onto [r0, r1] on a log10 scale. */
export function logScale(d0: number, d1: number, r0: number, r1: number): (x: number) => number {
  const l0 = Math.log10(d0)
  const span = Math.log10(d1) - l0
  return (x) => r0 + ((Math.log10(x) - l0) / span) * (r1 - r0)
}

/** Powers of ten covering [min, max]: the log axis's bounds and ticks. */
export function decades(min: number, max: number): number[] {
  const out: number[] = []
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e)
  return out
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const COLOURS = ['#1f5fbf', '#c0392b', '#2f8f4e', '#b7791f', '#7b3fa0', '#16808a', '#555555']
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"'
const tickLabel = (v: number) => (v >= 1000 ? `${v / 1000}k` : String(v))

function footer(lines: readonly string[], y: number): string {
  return lines.map((l, i) => `<text x="16" y="${y + i * 15}" font-size="11" fill="#555">${esc(l)}</text>`).join('\n')
}

export const provenanceLines = (sources: readonly Provenance[]): string[] =>
  sources.map((s) => `${s.file}${s.date ? ` (${s.date})` : ''}: ${s.machine ?? 'machine not recorded'}${s.load ? `; ${s.load}` : ''}`)

/** Log-log line chart of p50 latency against corpus size, one line per series. */
export function latencyChart(series: readonly LatencySeries[], sources: readonly Provenance[]): string {
  const width = 960
  const plot = { left: 70, top: 50, width: 480, height: 300 }
  const points = series.flatMap((s) => s.points)
  const xs = decades(Math.min(...points.map((p) => p.size)), Math.max(...points.map((p) => p.size)))
  const ys = decades(Math.min(...points.map((p) => p.p50Ms)), Math.max(...points.map((p) => p.p50Ms)))
  const x = logScale(xs[0]!, xs.at(-1)!, plot.left, plot.left + plot.width)
  const y = logScale(ys[0]!, ys.at(-1)!, plot.top + plot.height, plot.top)
  const lines = provenanceLines(sources)
  const height = plot.top + plot.height + 60 + lines.length * 15
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">Latency per mode by corpus size (p50 per query, one client)</text>`
  ]
  for (const v of xs) {
    parts.push(`<line x1="${x(v)}" y1="${plot.top}" x2="${x(v)}" y2="${plot.top + plot.height}" stroke="#e3e6ea"/>`)
    parts.push(`<text x="${x(v)}" y="${plot.top + plot.height + 16}" font-size="11" text-anchor="middle">${tickLabel(v)}</text>`)
  }
  for (const v of ys) {
    parts.push(`<line x1="${plot.left}" y1="${y(v)}" x2="${plot.left + plot.width}" y2="${y(v)}" stroke="#e3e6ea"/>`)
    parts.push(`<text x="${plot.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${v} ms</text>`)
  }
  parts.push(`<text x="${plot.left + plot.width / 2}" y="${plot.top + plot.height + 34}" font-size="12" text-anchor="middle">corpus size (chunks, entities or Episodes; log scale)</text>`)
  parts.push(`<text transform="translate(16 ${plot.top + plot.height / 2}) rotate(-90)" font-size="12" text-anchor="middle">p50 latency (log scale)</text>`)
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!
    const path = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${x(p.size).toFixed(1)},${y(p.p50Ms).toFixed(1)}`).join(' ')
    parts.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    for (const p of s.points) {
      parts.push(`<circle cx="${x(p.size).toFixed(1)}" cy="${y(p.p50Ms).toFixed(1)}" r="4" fill="${colour}" data-series="${esc(s.label)}" data-size="${p.size}" data-p50-ms="${p.p50Ms}"><title>${esc(`${s.label}: ${p.size} → ${p.p50Ms} ms (${p.file})`)}</title></circle>`)
    }
    const ly = plot.top + 6 + i * 36
    parts.push(`<line x1="${plot.left + plot.width + 16}" y1="${ly}" x2="${plot.left + plot.width + 34}" y2="${ly}" stroke="${colour}" stroke-width="3"/>`)
    const [head, detail] = s.label.split(' (')
    parts.push(`<text x="${plot.left + plot.width + 40}" y="${ly + 4}" font-size="12">${esc(head!)}</text>`)
    if (detail) parts.push(`<text x="${plot.left + plot.width + 40}" y="${ly + 18}" font-size="10" fill="#555">(${esc(detail)}</text>`)
  })
  parts.push(footer(['Made on:', ...lines], plot.top + plot.height + 58))
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}

const METRIC_NAMES: Record<string, string> = {
  recall_at_1: 'Recall@1', recall_at_5: 'Recall@5', recall_at_10: 'Recall@10', mrr_at_10: 'MRR@10', ndcg_at_10: 'nDCG@10'
}

/** Grouped bars (0..1): one group per row, one bar per figure. */
export function qualityChart(rows: readonly QualityRow[], sources: readonly Provenance[], dataset?: string): string {
  const metrics = [...new Set(rows.flatMap((r) => Object.keys(r.figures)))]
  const plot = { left: 56, top: 50, height: 260 }
  const bar = 14
  const group = metrics.length * bar + 56
  const width = Math.max(640, plot.left + rows.length * group + 150)
  const lines = provenanceLines(sources)
  const height = plot.top + plot.height + 84 + lines.length * 15
  const y = (v: number) => plot.top + plot.height * (1 - v)
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">Quality per leg${dataset ? ` on ${esc(dataset)}` : ''}</text>`
  ]
  for (const v of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    parts.push(`<line x1="${plot.left}" y1="${y(v)}" x2="${plot.left + rows.length * group}" y2="${y(v)}" stroke="#e3e6ea"/>`)
    parts.push(`<text x="${plot.left - 6}" y="${y(v) + 4}" font-size="11" text-anchor="end">${v.toFixed(1)}</text>`)
  }
  rows.forEach((row, g) => {
    const gx = plot.left + g * group + 12
    metrics.forEach((metric, m) => {
      const v = row.figures[metric]
      if (v === undefined) return
      const bx = gx + m * bar
      parts.push(`<rect x="${bx}" y="${y(v).toFixed(1)}" width="${bar - 2}" height="${(plot.height * v).toFixed(1)}" fill="${COLOURS[m % COLOURS.length]}" data-row="${esc(row.name)}" data-metric="${metric}" data-value="${v}"><title>${esc(`${row.name}: ${METRIC_NAMES[metric] ?? metric} ${v}`)}</title></rect>`)
    })
    // `lexical (CJK bigrams)` on two lines, so that neighbouring labels do not run into each other.
    const [head, detail] = row.name.split(' (')
    const cx = gx + (metrics.length * bar) / 2
    parts.push(`<text x="${cx}" y="${plot.top + plot.height + 16}" font-size="11" text-anchor="middle">${esc(head!)}</text>`)
    if (detail) parts.push(`<text x="${cx}" y="${plot.top + plot.height + 30}" font-size="11" text-anchor="middle" fill="#555">(${esc(detail)}</text>`)
  })
  metrics.forEach((metric, m) => {
    const ly = plot.top + 6 + m * 18
    const lx = plot.left + rows.length * group + 16
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="12" height="12" fill="${COLOURS[m % COLOURS.length]}"/>`)
    parts.push(`<text x="${lx + 18}" y="${ly + 1}" font-size="12">${esc(METRIC_NAMES[metric] ?? metric)}</text>`)
  })
  parts.push(footer(['Made on (quality does not depend on the machine\'s speed):', ...lines], plot.top + plot.height + 58))
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
