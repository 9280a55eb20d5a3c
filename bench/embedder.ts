/**
 * Local embedder speed: model load time, single short query latency (p50/p90/p99) and passage throughput
 * at batch sizes 1 (the default), 8 and 32 over paragraphs of the demo corpus. Writes
 * bench/results/embedder.json. The figures are wall-clock on whatever machine runs it, shared or not.
 *
 *   npx tsx bench/embedder.ts            (MODEL_DIR may be set; QUERY_RUNS, PASSAGE_ROUNDS too)
 */
import { cpus, loadavg, totalmem } from 'node:os'
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { LocalEmbedder } from '../src/providers/embedder/local.js'

const ROOT = resolve(import.meta.dirname, '..')
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? join(ROOT, 'models'))
const MODEL_NAME = 'bge-small-zh-v1.5'
const QUERY_RUNS = Number(process.env['QUERY_RUNS'] ?? 500)
const PASSAGE_ROUNDS = Number(process.env['PASSAGE_ROUNDS'] ?? 2)

const QUERIES = [
  '咳嗽三周以上要做什么检查',
  'API 流式返回改造有哪些约束',
  'Redis 主从切换演练的结论',
  '报销差旅费需要哪些材料',
  'Kafka 消费延迟的原因',
  '年假怎么计算'
]

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index] ?? Number.NaN
}

const round = (x: number, digits = 2): number => Number(x.toFixed(digits))

/** Paragraphs of the demo Markdown (headings and tiny lines dropped, long ones cut at 480 characters). */
async function demoPassages(): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.name.endsWith('.md')) {
        for (const paragraph of (await readFile(path, 'utf8')).split(/\n\s*\n/)) {
          const text = paragraph.trim()
          if (text.length >= 40 && !text.startsWith('#')) out.push(text.slice(0, 480))
        }
      }
    }
  }
  await walk(join(ROOT, 'demo', 'documents'))
  return out
}

async function main(): Promise<void> {
  const loadavgAtStart = loadavg()[0] ?? Number.NaN
  const loadStarted = performance.now()
  const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME })
  await embedder.init()
  const loadMs = performance.now() - loadStarted

  for (let i = 0; i < 30; i++) await embedder.embedQueries([QUERIES[i % QUERIES.length]!])
  const latencies: number[] = []
  for (let i = 0; i < QUERY_RUNS; i++) {
    const started = performance.now()
    await embedder.embedQueries([QUERIES[i % QUERIES.length]!])
    latencies.push(performance.now() - started)
  }
  latencies.sort((a, b) => a - b)
  const query = {
    runs: QUERY_RUNS,
    mean_chars: round(QUERIES.reduce((s, q) => s + q.length, 0) / QUERIES.length, 1),
    p50_ms: round(percentile(latencies, 50)),
    p90_ms: round(percentile(latencies, 90)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(latencies.at(-1) ?? Number.NaN)
  }
  console.error(`query: p50 ${query.p50_ms} ms, p99 ${query.p99_ms} ms over ${QUERY_RUNS} runs`)
  await embedder.close()

  const passages = await demoPassages()
  const throughput: Array<{ batch_size: number; texts: number; seconds: number; texts_per_s: number }> = []
  for (const batchSize of [1, 8, 32]) {
    const batched = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, batchSize })
    await batched.init()
    await batched.embedPassages(passages.slice(0, batchSize))
    const started = performance.now()
    for (let r = 0; r < PASSAGE_ROUNDS; r++) await batched.embedPassages(passages)
    const seconds = (performance.now() - started) / 1000
    await batched.close()
    const texts = passages.length * PASSAGE_ROUNDS
    throughput.push({ batch_size: batchSize, texts, seconds: round(seconds, 3), texts_per_s: round(texts / seconds, 1) })
    console.error(`passages, batch ${batchSize}: ${round(texts / seconds, 1)} texts/s`)
  }

  const cpu = cpus()
  const result = {
    generated_by: 'bench/embedder.ts',
    at: new Date().toISOString(),
    model: MODEL_NAME,
    model_dir: MODEL_DIR,
    machine: {
      cpus: cpu.length,
      cpu_model: cpu[0]?.model ?? 'unknown',
      memory_gb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      loadavg_1m_at_start: round(loadavgAtStart),
      loadavg_1m_at_end: round(loadavg()[0] ?? Number.NaN),
      note: 'shared machine: other work ran at the same time, so figures are indicative, not a baseline'
    },
    load_ms: round(loadMs),
    single_query: query,
    passages: {
      source: 'demo/documents paragraphs (>= 40 characters, cut at 480)',
      count: passages.length,
      mean_chars: round(passages.reduce((s, p) => s + p.length, 0) / passages.length, 1),
      throughput
    }
  }
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true })
  await writeFile(join(ROOT, 'bench', 'results', 'embedder.json'), `${JSON.stringify(result, null, 2)}\n`)
  console.error('wrote bench/results/embedder.json')
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
