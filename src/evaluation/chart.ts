/** An SVG of an evaluation: per arm, MRR@10 and Recall@5 as bars with their 95% bootstrap intervals. */
import type { EvaluationReport } from './evaluate.js'

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const COLOURS = ['#3b6ea5', '#e0803a', '#5a9e5a']

export function evaluationChart(report: Pick<EvaluationReport, 'arms' | 'questions'>, title: string, metrics = ['mrr_at_10', 'recall_at_5']): string {
  const names: Record<string, string> = { mrr_at_10: 'MRR@10', ndcg_at_10: 'nDCG@10' }
  const label = (m: string) => names[m] ?? m.replace('recall_at_', 'Recall@')
  const rowH = 16 * metrics.length + 14
  const left = 290
  const plotW = 420
  const top = 48
  const height = top + report.arms.length * rowH + 56
  const width = left + plotW + 40
  // The axis starts where the worst interval starts (rounded down to 0.05), so small differences show.
  const lows = report.arms.flatMap((a) => metrics.map((m) => a.metrics[m]?.ci_low ?? 0))
  const lo = Math.max(0, Math.floor(Math.min(...lows, 1) * 20) / 20 - 0.05)
  const x = (v: number) => left + ((v - lo) / (1 - lo)) * plotW
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="16" y="24" font-size="15" font-weight="600">${esc(title)} (${report.questions} questions; bars: mean, lines: 95% bootstrap interval)</text>`
  ]
  for (let t = Math.ceil(lo * 20) / 20; t <= 1.0001; t += (1 - lo) > 0.5 ? 0.1 : 0.05) {
    parts.push(`<line x1="${x(t).toFixed(1)}" y1="${top - 6}" x2="${x(t).toFixed(1)}" y2="${top + report.arms.length * rowH}" stroke="#e3e6ea"/>`)
    parts.push(`<text x="${x(t).toFixed(1)}" y="${top + report.arms.length * rowH + 14}" font-size="10" text-anchor="middle">${t.toFixed(2)}</text>`)
  }
  report.arms.forEach((arm, i) => {
    const y0 = top + i * rowH
    parts.push(`<text x="${left - 8}" y="${y0 + rowH / 2 + 2}" font-size="11" text-anchor="end">${esc(arm.label)}</text>`)
    metrics.forEach((m, j) => {
      const v = arm.metrics[m]
      if (!v) return
      const y = y0 + 4 + j * 16
      parts.push(`<rect x="${left}" y="${y}" width="${Math.max(0, x(v.mean) - left).toFixed(1)}" height="12" fill="${COLOURS[j % COLOURS.length]}"><title>${esc(`${arm.label}: ${label(m)} ${v.mean} [${v.ci_low}, ${v.ci_high}]`)}</title></rect>`)
      parts.push(`<line x1="${x(v.ci_low).toFixed(1)}" y1="${y + 6}" x2="${x(v.ci_high).toFixed(1)}" y2="${y + 6}" stroke="#222" stroke-width="1.5"/>`)
      parts.push(`<text x="${(x(v.ci_high) + 4).toFixed(1)}" y="${y + 10}" font-size="10">${v.mean.toFixed(3)}</text>`)
    })
  })
  metrics.forEach((m, j) => {
    const lx = 16 + j * 110
    const ly = height - 18
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLOURS[j % COLOURS.length]}"/><text x="${lx + 16}" y="${ly}" font-size="11">${label(m)}</text>`)
  })
  parts.push('</svg>')
  return `${parts.join('\n')}\n`
}
