/**
 * recall's analyzer beside Lucene 9.12.3's CJKAnalyzer on every CMRC 2018 trial paragraph and question: the
 * share tokenised identically, and the differing cases grouped by the first token where they part (to see
 * that what remains are the deliberate differences the README lists). Writes bench/results/analyzer.json.
 *
 *   npx tsx bench/analyzer.ts        (Java 17 and Maven; part of make bench-lexical)
 */
import { writeFile } from 'node:fs/promises'
import { analyze } from '../src/kernel/cjk-analyzer.js'
import { loadCmrc } from './lib/cmrc.js'
import { LuceneProcess, tsvField } from './lib/lucene.js'

async function main(): Promise<void> {
  const { documents, queries } = await loadCmrc()
  const texts = [...documents.map((d) => d.text), ...new Set(queries.map((q) => q.query))].map(tsvField).filter((t) => t.trim() !== '')
  const lucene = await LuceneProcess.start('1g')
  let same = 0
  const parts = new Map<string, { count: number; example: { text: string; recall: string[]; lucene: string[] } }>()
  try {
    for (const text of texts) {
      const ours = analyze(text)
      const theirs = await lucene.send<string[]>(`analyze ${text}`)
      if (ours.length === theirs.length && ours.every((t, i) => t === theirs[i])) {
        same++
        continue
      }
      let i = 0
      while (i < ours.length && i < theirs.length && ours[i] === theirs[i]) i++
      const key = `${ours[i] ?? '∅'} | ${theirs[i] ?? '∅'}`
      const entry = parts.get(key)
      if (entry) entry.count++
      else parts.set(key, { count: 1, example: { text: text.slice(0, 200), recall: ours.slice(Math.max(0, i - 2), i + 3), lucene: theirs.slice(Math.max(0, i - 2), i + 3) } })
    }
  } finally {
    await lucene.stop()
  }
  const out = {
    generated_by: 'bench/analyzer.ts',
    at: new Date().toISOString(),
    lucene: lucene.version,
    texts: texts.length,
    identical: same,
    identical_share: Math.round((same / texts.length) * 10000) / 10000,
    first_difference_recall_vs_lucene: [...parts].sort((a, b) => b[1].count - a[1].count).map(([key, v]) => ({ key, ...v }))
  }
  await writeFile('bench/results/analyzer.json', `${JSON.stringify(out, null, 2)}\n`)
  console.log(JSON.stringify({ texts: out.texts, identical_share: out.identical_share, top: out.first_difference_recall_vs_lucene.slice(0, 15).map((d) => `${d.count}× ${d.key}`) }, null, 1))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
