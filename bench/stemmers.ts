/**
 * Which English stemmer for the lexical analyzer (docs/lexical-index.md, "English words"): BM25 alone (the reference
 * implementation, wink-bm25-text-search, k1 1.2, b 0.75) over LoCoMo-10 conversations 2-9 (bench/lib/locomo.ts), every
 * category 1-4 question, with the CJK analyzer's tokens left as they are and stemmed by each candidate; R@5, MRR@10,
 * and the stemming cost per token. The service's stemmer (wink-porter2-stemmer) is a dependency; the others are
 * measured when installed beside it (`npm i --no-save stemmer@2.0.1 porter-stemmer@0.9.1 snowball-stemmers@0.6.0`, or
 * a folder of them on `NODE_PATH`),
 * and named as skipped otherwise. Writes bench/results/stemmers.json.
 *
 *   LOCOMO_JSON=/path/to/locomo10.json npx tsx bench/stemmers.ts
 */
import { createRequire } from 'node:module'
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import bm25 from 'wink-bm25-text-search'
import { analyze } from '../src/kernel/cjk-analyzer.js'
import { stemTokens } from '../src/kernel/english-analyzer.js'
import { loadLocomo } from './lib/locomo.js'

const require = createRequire(import.meta.url)

type Stem = (word: string) => string

async function candidates(): Promise<{ found: Record<string, Stem>; skipped: string[] }> {
  const found: Record<string, Stem> = { none: (w) => w }
  const skipped: string[] = []
  const tries: Array<[string, () => Promise<Stem>]> = [
    ['wink-porter2-stemmer (Porter2)', async () => require('wink-porter2-stemmer') as Stem],
    ['snowball-stemmers english (Porter2)', async () => {
      const s = (require('snowball-stemmers') as { newStemmer(lang: string): { stem(w: string): string } }).newStemmer('english')
      return (w) => s.stem(w)
    }],
    ['stemmer (Porter)', async () => (require('stemmer') as { stemmer: Stem }).stemmer],
    ['porter-stemmer (Porter)', async () => (require('porter-stemmer') as { stemmer: Stem }).stemmer]
  ]
  for (const [name, load] of tries) {
    try {
      found[name] = await load()
    } catch {
      skipped.push(name)
    }
  }
  return { found, skipped }
}

async function main(): Promise<void> {
  const conversations = await loadLocomo()
  const { found, skipped } = await candidates()
  const results: Record<string, unknown> = {}
  const words = conversations.flatMap((c) => c.turns.flatMap((t) => analyze(t.text))).filter((w) => /^[a-z]+$/.test(w))
  for (const [name, stem] of Object.entries(found)) {
    const analyzer = (text: string) => stemTokens(analyze(text), stem)
    let r5 = 0, mrr = 0, n = 0
    for (const c of conversations) {
      const engine = bm25()
      engine.defineConfig({ fldWeights: { text: 1 }, bm25Params: { k1: 1.2, b: 0.75, k: 1 } })
      engine.definePrepTasks([analyzer])
      for (const t of c.turns) engine.addDoc({ text: t.text }, t.id)
      engine.consolidate()
      for (const q of c.questions) {
        const ranked = engine.search(q.question, 10).map(([id]) => String(id))
        const relevant = new Set(q.evidence)
        r5 += ranked.slice(0, 5).filter((id) => relevant.has(id)).length / relevant.size
        const first = ranked.findIndex((id) => relevant.has(id))
        if (first >= 0) mrr += 1 / (first + 1)
        n++
      }
    }
    const t0 = performance.now()
    for (let round = 0; round < 3; round++) for (const w of words) stem(w)
    const nsPerWord = ((performance.now() - t0) * 1e6) / (3 * words.length)
    results[name] = { questions: n, lexical_r5: Math.round((r5 / n) * 10000) / 10000, lexical_mrr10: Math.round((mrr / n) * 10000) / 10000, ns_per_word: Math.round(nsPerWord) }
  }
  const out = { generated_by: 'bench/stemmers.ts', at: new Date().toISOString(), load_average: loadavg().map((x) => Math.round(x * 100) / 100), words_timed: words.length, skipped, results }
  await writeFile('bench/results/stemmers.json', `${JSON.stringify(out, null, 2)}\n`)
  console.log(JSON.stringify(out, null, 1))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
