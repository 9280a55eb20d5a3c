/**
 * Issue 40 item 3: which embedding model and which lexical analyzer for an English memory. Over LoCoMo-10
 * conversations 2-9 (bench/lib/locomo.ts; one index per conversation, each turn one document), every category 1-4
 * question is answered by hybrid as the service ranks it (the vector leg's exact cosine top 50, the embedded BM25
 * index's top 50, convex fusion alpha 0.5 with min-max normalisation: adapters/hybrid/fusion-convex.ts), for
 * bge-small-zh-v1.5 and bge-small-en-v1.5 each with the lexical analyzer `cjk-bigram` (stemming off) and
 * `cjk-bigram-english` (on). Reports R@5 (share of a question's evidence turns among the first 5), MRR@10 and hit@10,
 * each leg alone too, and the embedding time per turn of each model (one text per ONNX run, one thread, as the
 * service embeds). Writes bench/results/english-memory.json.
 *
 *   LOCOMO_JSON=/path/to/locomo10.json npx tsx bench/english-memory.ts
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fuseByConvex } from '../adapters/hybrid/fusion-convex.js'
import type { ServiceAnalyzer } from '../src/kernel/analyzers.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { LocalModelName } from '../src/providers/embedder/models.js'
import { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { loadLocomo, type LocomoConversation } from './lib/locomo.js'

const MODELS: LocalModelName[] = ['bge-small-zh-v1.5', 'bge-small-en-v1.5']
const ANALYZERS: ServiceAnalyzer[] = ['cjk-bigram', 'cjk-bigram-english']
const WINDOW = 50

type Ranked = { id: string; score: number }[]

interface Figures { questions: number; r5: number; mrr10: number; hit10: number }

function figures(runs: Array<{ ranked: readonly string[]; evidence: readonly string[] }>): Figures {
  let r5 = 0, mrr = 0, hit = 0
  for (const { ranked, evidence } of runs) {
    const relevant = new Set(evidence)
    r5 += ranked.slice(0, 5).filter((id) => relevant.has(id)).length / relevant.size
    const first = ranked.slice(0, 10).findIndex((id) => relevant.has(id))
    if (first >= 0) { mrr += 1 / (first + 1); hit += 1 }
  }
  const n = runs.length
  const round = (x: number) => Math.round((x / n) * 10000) / 10000
  return { questions: n, r5: round(r5), mrr10: round(mrr), hit10: round(hit) }
}

function cosineTop(query: Float32Array, ids: readonly string[], vectors: readonly Float32Array[], k: number): Ranked {
  const scored = vectors.map((v, i) => {
    let s = 0
    for (let j = 0; j < v.length; j++) s += v[j]! * query[j]!
    return { id: ids[i]!, score: s }
  })
  return scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k)
}

async function embedAll(model: LocalModelName, conversations: LocomoConversation[]) {
  const embedder = new LocalEmbedder({ modelDir: resolve(process.env['MODEL_DIR'] ?? 'models'), modelName: model, threads: 1 })
  await embedder.init()
  const passages = new Map<number, Float32Array[]>()
  const queries = new Map<number, Float32Array[]>()
  let turns = 0
  let passageMs = 0
  let queryMs = 0
  let asked = 0
  try {
    for (const c of conversations) {
      let t0 = performance.now()
      passages.set(c.index, await embedder.embedPassages(c.turns.map((t) => t.text)))
      passageMs += performance.now() - t0
      turns += c.turns.length
      t0 = performance.now()
      queries.set(c.index, await embedder.embedQueries(c.questions.map((q) => q.question)))
      queryMs += performance.now() - t0
      asked += c.questions.length
      process.stdout.write(`[${model}] conversation ${c.index}: ${c.turns.length} turns embedded\n`)
    }
  } finally {
    await embedder.close()
  }
  return { passages, queries, cost: { turns, ms_per_turn: Math.round((passageMs / turns) * 100) / 100, questions: asked, ms_per_question: Math.round((queryMs / asked) * 100) / 100 } }
}

async function main(): Promise<void> {
  const loadBefore = loadavg()
  const conversations = await loadLocomo()
  const dir = await mkdtemp(join(tmpdir(), 'recall-english-memory-'))
  // the lexical leg of each analyzer, per conversation
  const lexical = new Map<string, Ranked[]>()
  try {
    for (const analyzer of ANALYZERS) {
      for (const c of conversations) {
        const index = new EmbeddedLexicalIndex({ dir: join(dir, `${analyzer}-${c.index}`), analyzer })
        await index.sync(c.turns.map((t) => ({ id: t.id, text: t.text })))
        const answers: Ranked[] = []
        for (const q of c.questions) answers.push((await index.search(q.question, WINDOW)).map((h) => ({ id: h.id, score: h.score })))
        lexical.set(`${analyzer}/${c.index}`, answers)
        await index.close()
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }

  const results: Record<string, unknown> = {}
  const costs: Record<string, unknown> = {}
  for (const model of MODELS) {
    const { passages, queries, cost } = await embedAll(model, conversations)
    costs[model] = cost
    const vectorRuns: Array<{ ranked: string[]; evidence: string[] }> = []
    const arms = new Map<ServiceAnalyzer, { hybrid: typeof vectorRuns; lexical: typeof vectorRuns; byCategory: Map<number, typeof vectorRuns> }>()
    for (const analyzer of ANALYZERS) arms.set(analyzer, { hybrid: [], lexical: [], byCategory: new Map() })
    for (const c of conversations) {
      const ids = c.turns.map((t) => t.id)
      c.questions.forEach((q, i) => {
        const vector = cosineTop(queries.get(c.index)![i]!, ids, passages.get(c.index)!, WINDOW)
        vectorRuns.push({ ranked: vector.map((h) => h.id), evidence: q.evidence })
        for (const analyzer of ANALYZERS) {
          const lex = lexical.get(`${analyzer}/${c.index}`)![i]!
          const fused = fuseByConvex([
            { leg: 'lexical', hits: lex, theoreticalMin: 0 }, { leg: 'vector', hits: vector, theoreticalMin: -1 }
          ], { alpha: 0.5, window: WINDOW, normalisation: 'minmax', tieBreakLeg: 'vector' })
          const arm = arms.get(analyzer)!
          const run = { ranked: fused.map((f) => f.id), evidence: q.evidence }
          arm.hybrid.push(run)
          arm.lexical.push({ ranked: lex.map((h) => h.id), evidence: q.evidence })
          const cat = arm.byCategory.get(q.category) ?? []
          cat.push(run)
          arm.byCategory.set(q.category, cat)
        }
      })
    }
    results[model] = {
      vector_only: figures(vectorRuns),
      ...Object.fromEntries([...arms].map(([analyzer, arm]) => [analyzer === 'cjk-bigram' ? 'stemming_off' : 'stemming_on', {
        hybrid: figures(arm.hybrid),
        lexical_only: figures(arm.lexical),
        hybrid_by_category: Object.fromEntries([...arm.byCategory].sort((a, b) => a[0] - b[0]).map(([k, v]) => [k, figures(v)]))
      }]))
    }
  }
  const out = {
    generated_by: 'bench/english-memory.ts',
    at: new Date().toISOString(),
    data: 'LoCoMo-10 conversations 2-9, category 1-4 questions with evidence; one document per turn (speaker: text [photo: caption])',
    conversations: conversations.map((c) => c.index),
    turns: conversations.reduce((n, c) => n + c.turns.length, 0),
    questions: conversations.reduce((n, c) => n + c.questions.length, 0),
    hybrid: `convex alpha 0.5, minmax, window ${WINDOW} per leg`,
    load_average_before: loadBefore.map((x) => Math.round(x * 100) / 100),
    load_average_after: loadavg().map((x) => Math.round(x * 100) / 100),
    cores: 2,
    embedding_cost: costs,
    results
  }
  await writeFile('bench/results/english-memory.json', `${JSON.stringify(out, null, 2)}\n`)
  console.log(JSON.stringify(out, null, 1))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
