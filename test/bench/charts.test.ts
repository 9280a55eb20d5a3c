import { describe, expect, it } from 'vitest'
import { decades, latencyChart, logScale, provenance, qualityChart, readLatency, readQuality, type ResultsFile } from '../../bench/lib/charts.js'
import { readReplicas, replicasChart } from '../../bench/lib/replicas-chart.js'

const hybrid: ResultsFile = {
  name: 'hybrid.json',
  data: {
    date: '2026-11-29T13:06:28Z', machine: '2 cores, 24 GiB',
    results: [
      { chunks: 1000, c1: { total_ms: { p50: 7.75 } }, c16: { total_ms: { p50: 150 } } },
      { chunks: 10000, c1: { server_took_ms: { p50: 12.8 } } },
      { chunks: 50000, c1: { total_ms: { p95: 40 } } }
    ]
  }
}
const graphrag: ResultsFile = {
  name: 'graphrag.json',
  data: {
    date: '2026-11-29T12:32:30Z', machine: { cpus: 2, cpu: 'Xeon', memory_gib: 24, node: 'v20.20.2' },
    results: [
      { backend: 'memory', entities: 1000, p50_ms: 0.057, added_later: true },
      { backend: 'neo4j', entities: 1000, p50_ms: 6.9 }
    ]
  }
}
const episodicOld: ResultsFile = {
  name: 'episodic.json',
  data: {
    date: '2026-11-29T12:35:32Z', load_average_1_5_15: [[7.45, 6.6, 7.39], [5.48, 6.19, 7.02]],
    results: {
      embedded_1000: { graph: 'embedded', episodes: 1000, retrieve_including_embedding: { p50_ms: 40.07 } },
      embedded_10000: { graph: 'embedded', episodes: 10000, retrieve_including_embedding: { p50_ms: 150 } }
    }
  }
}
const episodicQuiet: ResultsFile = {
  name: 'episodic-1k-quiet.json',
  data: { date: '2026-11-29T13:23:38Z', results: { embedded_1000: { graph: 'embedded', episodes: 1000, retrieve_including_embedding: { p50_ms: 16.91 } } } }
}
const odd: ResultsFile[] = [
  { name: 'hybrid-new-shape.json', data: { results: 'not a list' } },
  { name: 'lexical-vs-lucene.json', data: { results: [{ chunks: 1000, p50_ms: 3 }] } },
  { name: 'graphrag-extra.json', data: [1, 2, 3] }
]

describe('bench charts: reading results files', () => {
  it('reads each mode\'s shape, skipping rows without a figure and files it does not know', () => {
    const { series, used, skipped } = readLatency([hybrid, graphrag, episodicOld, episodicQuiet, ...odd])
    expect(series.map((s) => [s.label.split(' (')[0], s.points.map((p) => [p.size, p.p50Ms])])).toEqual([
      ['episodic, embedded graph', [[1000, 16.91], [10000, 150]]],
      ['graphrag, Neo4j', [[1000, 6.9]]],
      ['graphrag, embedded', [[1000, 0.057]]],
      // 1k from total_ms, 10k falls back to the server's took_ms, 50k has no p50 and is left out
      ['hybrid, embedded', [[1000, 7.75], [10000, 12.8]]]
    ])
    expect(used).toEqual(['episodic-1k-quiet.json', 'episodic.json', 'graphrag.json', 'hybrid.json'])
    expect(skipped).toEqual(['hybrid-new-shape.json: no latency rows of a known shape', 'graphrag-extra.json: no latency rows of a known shape'])
  })

  it('lets the newer file win where two give the same point', () => {
    const swapped = { ...episodicQuiet, data: { ...(episodicQuiet.data as object), date: '2026-11-28T00:00:00Z' } } as ResultsFile
    const { series } = readLatency([episodicOld, swapped])
    expect(series[0]!.points[0]).toEqual({ size: 1000, p50Ms: 40.07, file: 'episodic.json' })
  })

  it('takes the quality rows that run a leg at its defaults, and every numeric figure but the count', () => {
    const quality: ResultsFile = {
      name: 'quality.json',
      data: {
        rows: [
          { name: 'lexical (CJK bigrams)', settings: { legs: ['lexical'] }, figures: { queries: 1002, recall_at_5: 0.99, mrr_at_10: 0.9787 } },
          { name: 'hybrid (k 60, window 50)', settings: {}, figures: { queries: 1002, recall_at_5: 0.989, new_metric: 0.5 } },
          { name: 'hybrid k 1', settings: { rrf_k: 1 }, figures: { recall_at_5: 0.994 } },
          { name: 'broken', settings: {}, figures: 'n/a' },
          'not a row'
        ]
      }
    }
    expect(readQuality([quality, hybrid]).rows).toEqual([
      { name: 'lexical (CJK bigrams)', figures: { recall_at_5: 0.99, mrr_at_10: 0.9787 } },
      { name: 'hybrid (k 60, window 50)', figures: { recall_at_5: 0.989, new_metric: 0.5 } }
    ])
    expect(readQuality([{ name: 'quality-old.json', data: { table: [] } }]).skipped).toEqual(['quality-old.json: no quality rows of a known shape'])
  })

  it('says which machine and load each file was measured under', () => {
    expect(provenance(graphrag)).toEqual({ file: 'graphrag.json', date: '2026-11-29', machine: '2 cores, Xeon, 24 GiB, Node v20.20.2' })
    expect(provenance(hybrid)).toEqual({ file: 'hybrid.json', date: '2026-11-29', machine: '2 cores, 24 GiB' })
    expect(provenance(episodicOld)).toEqual({ file: 'episodic.json', date: '2026-11-29', load: 'load average (1 min) 5.48–7.45' })
  })
})

describe('bench charts: drawing', () => {
  it('log scale: 10 is a third of the way from 1 to 1000', () => {
    // log10(10) - log10(1) = 1 of log10(1000) - log10(1) = 3 decades -> 300 px / 3 = 100
    expect(logScale(1, 1000, 0, 300)(10)).toBeCloseTo(100, 9)
    // an inverted range (an SVG y axis): 100 sits 2/3 of the way from 300 towards 0
    expect(logScale(1, 1000, 300, 0)(100)).toBeCloseTo(100, 9)
    expect(decades(0.057, 31.9)).toEqual([0.01, 0.1, 1, 10, 100])
  })

  it('puts one marker per point and names the machine in the footer', () => {
    const { series, used } = readLatency([hybrid, graphrag])
    const svg = latencyChart(series, used.map((n) => provenance([hybrid, graphrag].find((f) => f.name === n)!)))
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect([...svg.matchAll(/<circle [^>]*data-size="(\d+)" data-p50-ms="([\d.]+)"/g)].map((m) => [m[1], m[2]])).toEqual([
      ['1000', '6.9'], ['1000', '0.057'], ['1000', '7.75'], ['10000', '12.8']
    ])
    expect(svg).toContain('graphrag.json (2026-11-29): 2 cores, Xeon, 24 GiB, Node v20.20.2')
  })

  it('draws one bar per row and figure, scaled 0..1', () => {
    const svg = qualityChart([{ name: 'vector', figures: { recall_at_5: 0.5 } }], [{ file: 'quality.json' }], 'cmrc2018_trial')
    // the plot is 260 px high from y = 50: a bar of 0.5 starts at 50 + 260·0.5 = 180 and is 130 high
    expect(svg).toMatch(/<rect x="\d+" y="180.0" width="12" height="130.0" fill="#[0-9a-f]+" data-row="vector" data-metric="recall_at_5" data-value="0.5">/)
    expect(svg).toContain('quality.json: machine not recorded')
  })
})

describe('the replicas chart (bench/lib/replicas-chart.ts)', () => {
  const file: ResultsFile = {
    name: 'replicas-service.json',
    data: {
      at: '2026-12-01T12:00:00Z', chunks: 10000, machine: { cpus: 2 }, load_average_1_5_15: [[9.5, 8, 7], [12.25, 9, 8]],
      hybrid: { took_ms_embedded: { median: 30, p99: 80 }, took_ms_qdrant: { median: 90, p99: 200 }, top10_identical: 0.98 },
      writes: [{ namespace: 'writes', writes: 200, findable_ms_without_min_generation: { p50: 40, p99: 120 }, findable_ms_with_min_generation: { p50: 35, p99: null } }],
      throughput: { runs: [{ replicas: 1, answers_per_s: 16 }, { replicas: 2, answers_per_s: 24 }], ratio: 1.5 }
    }
  }

  it('reads one panel per part the run measured, leaving out a figure that is not a number', () => {
    const panels = readReplicas(file)
    expect(panels.map((p) => p.bars.map((b) => [b.label, b.value]))).toEqual([
      [['embedded, median', 30], ['Qdrant, median', 90], ['embedded, p99', 80], ['Qdrant, p99', 200]],
      [['polling, p50', 40], ['min_generation, p50', 35], ['polling, p99', 120]],
      [['1 replica', 16], ['2 replicas', 24]]
    ])
    expect(panels[0]!.title).toContain('10000 chunks')
    expect(panels[2]!.title).toContain('1.5')
    expect(readReplicas({ name: 'replicas-service.json', data: { chunks: 5 } })).toEqual([])
  })

  it('draws each panel on its own scale: the largest bar of a panel is full width', () => {
    const svg = replicasChart(readReplicas(file), [provenance(file)])
    const width = (bar: string) => Number(new RegExp(`width="([\\d.]+)"[^>]*data-bar="${bar}"`).exec(svg)![1])
    expect(width('Qdrant, p99')).toBe(560)
    expect(width('2 replicas')).toBe(560)
    expect(width('1 replica')).toBeCloseTo((16 / 24) * 560, 1)
    expect(width('embedded, median')).toBeCloseTo((30 / 200) * 560, 1)
    expect(svg).toContain('load average (1 min) 9.5–12.25')
  })
})
