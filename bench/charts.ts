/**
 * Writes the SVG charts the README shows, from bench/results/*.json (run by `make bench` and `make quality`):
 *   bench/results/latency-by-size.svg   p50 latency per mode by corpus size
 *   bench/results/quality-by-leg.svg    Recall, MRR and nDCG per leg on the labelled set
 *   bench/results/replicas.svg          two replicas over Qdrant and Redis (bench/replicas-service.ts)
 *
 *   npx tsx bench/charts.ts [results-dir]
 */
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readReplicas, replicasChart } from './lib/replicas-chart.js'
import { latencyChart, provenance, qualityChart, readLatency, readQuality, type ResultsFile } from './lib/charts.js'

async function main(dir: string): Promise<void> {
  const files: ResultsFile[] = []
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.json')).sort()) {
    try {
      files.push({ name, data: JSON.parse(await readFile(join(dir, name), 'utf8')) })
    } catch (error) {
      process.stderr.write(`charts: ${name} skipped, not JSON (${error instanceof Error ? error.message : String(error)})\n`)
    }
  }
  const byName = new Map(files.map((f) => [f.name, f]))
  const latency = readLatency(files)
  const quality = readQuality(files)
  for (const note of [...latency.skipped, ...quality.skipped]) process.stderr.write(`charts: ${note}\n`)
  if (latency.series.length > 0) {
    await writeFile(join(dir, 'latency-by-size.svg'), latencyChart(latency.series, latency.used.map((n) => provenance(byName.get(n)!))))
    process.stdout.write(`wrote ${join(dir, 'latency-by-size.svg')} (${latency.series.length} series from ${latency.used.join(', ')})\n`)
  }
  if (quality.rows.length > 0) {
    const source = byName.get(quality.used[0]!)!
    const dataset = (source.data as { dataset?: unknown }).dataset
    await writeFile(join(dir, 'quality-by-leg.svg'),
      qualityChart(quality.rows, quality.used.map((n) => provenance(byName.get(n)!)), typeof dataset === 'string' ? dataset.split(' (')[0] : undefined))
    process.stdout.write(`wrote ${join(dir, 'quality-by-leg.svg')} (${quality.rows.length} rows from ${quality.used.join(', ')})\n`)
  }
  const replicas = byName.get('replicas-service.json')
  const panels = replicas ? readReplicas(replicas) : []
  if (replicas && panels.length > 0) {
    await writeFile(join(dir, 'replicas.svg'), replicasChart(panels, [provenance(replicas)]))
    process.stdout.write(`wrote ${join(dir, 'replicas.svg')} (${panels.length} panels from replicas-service.json)\n`)
  }
}

main(process.argv[2] ?? fileURLToPath(new URL('results', import.meta.url))).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
  process.exit(1)
})
