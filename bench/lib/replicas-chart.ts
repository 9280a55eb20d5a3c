/**
 * The chart of bench/results/replicas-service.json (bench/replicas-service.ts): three panels of horizontal
 * bars, each on its own linear scale: hybrid took_ms embedded against Qdrant, write on A -> findable on B,
 * answers per second with one replica and with two.
 */
import { provenanceLines, type Provenance, type ResultsFile } from './charts.js'

export interface BarPanel {
  title: string
  unit: string
  bars: { label: string; value: number }[]
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"'
const COLOURS = ['#1f5fbf', '#c0392b', '#2f8f4e']
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

type Summary = { p50?: number; p99?: number; median?: number }
interface ReplicasResult {
  chunks?: number
  hybrid?: { took_ms_embedded: Summary; took_ms_qdrant: Summary; top10_identical: number }
  writes?: { namespace: string; writes: number; findable_ms_without_min_generation: Summary; findable_ms_with_min_generation: Summary }[]
  throughput?: { runs: { replicas: number; answers_per_s: number }[]; ratio: number }
}

/** The panels replicas-service.json holds (a part the run skipped gives no panel; a bar without a figure is left out). */
export function readReplicas(file: ResultsFile): BarPanel[] {
  const r = file.data as ReplicasResult
  const panels: BarPanel[] = []
  const bars = (list: [string, unknown][]) => list.flatMap(([label, value]) => (isFiniteNumber(value) ? [{ label, value }] : []))
  if (r.hybrid) {
    panels.push({
      title: `hybrid /retrieve took_ms at ${r.chunks ?? '?'} chunks (top-10 identical: ${r.hybrid.top10_identical})`, unit: 'ms',
      bars: bars([
        ['embedded, median', r.hybrid.took_ms_embedded.median], ['Qdrant, median', r.hybrid.took_ms_qdrant.median],
        ['embedded, p99', r.hybrid.took_ms_embedded.p99], ['Qdrant, p99', r.hybrid.took_ms_qdrant.p99]
      ])
    })
  }
  for (const w of r.writes ?? []) {
    panels.push({
      title: `write on A → findable on B (namespace ${w.namespace}, ${w.writes} writes)`, unit: 'ms',
      bars: bars([
        ['polling, p50', w.findable_ms_without_min_generation.p50], ['min_generation, p50', w.findable_ms_with_min_generation.p50],
        ['polling, p99', w.findable_ms_without_min_generation.p99], ['min_generation, p99', w.findable_ms_with_min_generation.p99]
      ])
    })
  }
  if (r.throughput) {
    panels.push({
      title: `answers per second, uncached hybrid (two / one: ${r.throughput.ratio})`, unit: '/s',
      bars: bars(r.throughput.runs.map((t) => [`${t.replicas} replica${t.replicas === 1 ? '' : 's'}`, t.answers_per_s]))
    })
  }
  return panels.filter((p) => p.bars.length > 0)
}

export function replicasChart(panels: readonly BarPanel[], sources: readonly Provenance[]): string {
  const width = 860
  const label = 170
  const plotWidth = 560
  const row = 22
  const lines = provenanceLines(sources)
  let y = 50
  const parts: string[] = []
  for (const panel of panels) {
    const max = Math.max(...panel.bars.map((b) => b.value))
    parts.push(`<text x="16" y="${y}" font-size="13" font-weight="600">${esc(panel.title)}</text>`)
    y += 10
    panel.bars.forEach((b, i) => {
      const w = max > 0 ? (b.value / max) * plotWidth : 0
      const colour = COLOURS[i % 2 === 0 ? 0 : 1]!
      parts.push(`<text x="${16 + label - 8}" y="${y + 15}" font-size="12" text-anchor="end">${esc(b.label)}</text>`)
      parts.push(`<rect x="${16 + label}" y="${y + 3}" width="${w.toFixed(1)}" height="${row - 6}" fill="${panel.unit === '/s' ? COLOURS[2] : colour}" data-panel="${esc(panel.title)}" data-bar="${esc(b.label)}" data-value="${b.value}"><title>${esc(`${b.label}: ${b.value} ${panel.unit}`)}</title></rect>`)
      parts.push(`<text x="${16 + label + w + 6}" y="${y + 15}" font-size="11">${b.value} ${panel.unit === '/s' ? 'answers/s' : panel.unit}</text>`)
      y += row
    })
    y += 26
  }
  const height = y + 20 + lines.length * 15
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT}>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">Two recall replicas over one Qdrant and Redis (bench/replicas-service.ts)</text>`,
    ...parts,
    ...['Made on:', ...lines].map((l, i) => `<text x="16" y="${y + 4 + i * 15}" font-size="11" fill="#555">${esc(l)}</text>`),
    '</svg>'
  ].join('\n') + '\n'
}
