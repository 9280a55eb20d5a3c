/**
 * The lexical leg beside Apache Lucene 9.12 (CJKAnalyzer, BM25Similarity(1.2, 0.75)), in one run, on the
 * same corpus and queries: full build, query median and p99 (analysis + top 50, one thread), add one
 * document until searchable, index memory. Writes bench/results/lexical.json.
 *
 *   npx tsx bench/lexical.ts [--sizes 10000,50000,100000] [--rounds 3]       (make bench-lexical)
 *
 * Corpus: the CMRC 2018 trial paragraphs (chunked as the service does), then one-chunk documents
 * recombined from CMRC sentences (bench/lib/synthetic.ts) up to each size. Queries: the CMRC questions.
 * The engines take turns, `--rounds` times, so that drift on a shared machine hits both alike.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { loadCmrc } from './lib/cmrc.js'
import { LuceneProcess, tsvField } from './lib/lucene.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '10000,50000,100000' }, rounds: { type: 'string', default: '3' } } })
const sizes = values.sizes!.split(',').map(Number)
const rounds = Number(values.rounds)
const LIMIT = 50

const pct = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const ms = (x: number) => Math.round(x * 1000) / 1000
const stats = (xs: readonly number[]) => ({ median_ms: ms(pct(xs, 50)), p90_ms: ms(pct(xs, 90)), p99_ms: ms(pct(xs, 99)), mean_ms: ms(xs.reduce((a, b) => a + b, 0) / xs.length) })

async function main(): Promise<void> {
  const loadAtStart = loadavg()
  const { documents, queries } = await loadCmrc()
  const real = documents.flatMap((d) => chunkDocument(d)).map((c) => ({ id: c.id, text: c.text }))
  const largest = Math.max(...sizes)
  const synthetic = syntheticDocuments(documents.map((d) => d.text), largest - real.length, 13).map((d) => ({ id: d.id, text: d.text }))
  const corpus = [...real, ...synthetic]
  const questions = [...new Set(queries.map((q) => q.query))]
  const work = await mkdtemp(join(tmpdir(), 'recall-bench-lexical-'))
  const queryFile = join(work, 'queries.txt')
  await writeFile(queryFile, `${questions.map(tsvField).join('\n')}\n`)
  const lucene = await LuceneProcess.start()
  const results: Record<string, unknown>[] = []
  try {
    for (const size of sizes) {
      const docs = corpus.slice(0, size)
      console.error(`${size} chunks`)
      const corpusFile = join(work, `corpus-${size}.tsv`)
      await writeFile(corpusFile, `${docs.map((d) => `${d.id}\t${tsvField(d.text)}`).join('\n')}\n`)
      const lucBuild = await lucene.send<{ ms: number; index_bytes: number; segments: number }>(`load ${corpusFile}`)

      const index = new EmbeddedLexicalIndex({ dir: join(work, `recall-${size}`) })
      const heapBefore = process.memoryUsage()
      let t = performance.now()
      await index.sync(docs)
      const syncMs = performance.now() - t
      await index.idle()
      const buildMs = performance.now() - t

      const recallTimes: number[] = []
      const luceneTimes: number[] = []
      const runRecall = async () => {
        const out: number[] = []
        for (const q of questions) {
          const s = performance.now()
          await index.search(q, LIMIT)
          out.push(performance.now() - s)
        }
        return out
      }
      await runRecall() // warm-up
      await lucene.send(`queries ${queryFile} ${LIMIT}`)
      for (let r = 0; r < rounds; r++) {
        recallTimes.push(...await runRecall())
        luceneTimes.push(...(await lucene.send<{ us: number[] }>(`queries ${queryFile} ${LIMIT}`)).us.map((us) => us / 1000))
      }

      // top-10 agreement: Lucene stores lengths in one byte (lossy), so small rank swaps are expected
      const idsFile = join(work, `ids-${size}.tsv`)
      await lucene.send(`ids ${queryFile} 10 ${idsFile}`)
      const lucIds = (await import('node:fs/promises')).readFile(idsFile, 'utf8').then((s) => s.split('\n').map((l) => (l === '' ? [] : l.split('\t'))))
      const lucTop = await lucIds
      let overlap = 0
      let compared = 0
      for (let i = 0; i < questions.length; i++) {
        const ours = (await index.search(questions[i]!, 10)).map((h) => h.id)
        const theirs = new Set(lucTop[i] ?? [])
        if (ours.length === 0 && theirs.size === 0) continue
        overlap += ours.filter((id) => theirs.has(id)).length / Math.max(ours.length, theirs.size)
        compared += 1
      }

      // one document added, until a search finds it
      const adds = { recall: [] as number[], lucene: [] as number[], lucene_reopen: [] as number[] }
      for (let i = 0; i < 20; i++) {
        const doc = { id: `added-${size}-${i}`, text: `新增文档 tagadded${i} ${docs[i * 37]!.text}` }
        t = performance.now()
        await index.write({ upsert: [doc] })
        const found = (await index.search(`tagadded${i}`, 1))[0]?.id === doc.id
        adds.recall.push(performance.now() - t)
        if (!found) throw new Error(`recall did not find ${doc.id}`)
        const r = await lucene.send<{ searchable_ms: number; reopen_ms: number; found: boolean }>(`add ${doc.id}\t${tsvField(doc.text)}`)
        adds.lucene.push(r.searchable_ms)
        adds.lucene_reopen.push(r.reopen_ms)
      }
      await index.idle()
      const heapAfter = process.memoryUsage()
      const recallQ = stats(recallTimes)
      const luceneQ = stats(luceneTimes)
      results.push({
        chunks: size,
        queries: questions.length,
        rounds,
        query: {
          recall: recallQ,
          lucene: luceneQ,
          ratio_median: Math.round((recallQ.median_ms / luceneQ.median_ms) * 100) / 100,
          ratio_p99: Math.round((recallQ.p99_ms / luceneQ.p99_ms) * 100) / 100
        },
        top10_overlap_with_lucene: Math.round((overlap / compared) * 1000) / 1000,
        build: {
          recall_sync_ms: Math.round(syncMs),
          recall_with_merges_ms: Math.round(buildMs),
          lucene_ms: Math.round(lucBuild.ms),
          recall_segments: index.segmentCount,
          lucene_segments: lucBuild.segments
        },
        add_one_until_searchable: {
          recall: stats(adds.recall),
          lucene: stats(adds.lucene),
          lucene_reopen_only: stats(adds.lucene_reopen)
        },
        memory: {
          recall_index_mib: Math.round(index.memoryBytes / 2 ** 20),
          recall_heap_delta_mib: Math.round((heapAfter.heapUsed - heapBefore.heapUsed) / 2 ** 20),
          lucene_index_mib: Math.round(lucBuild.index_bytes / 2 ** 20)
        }
      })
      console.error(JSON.stringify(results[results.length - 1]))
      await index.close()
    }
  } finally {
    await lucene.stop()
    await rm(work, { recursive: true, force: true })
  }
  const out = {
    generated_by: 'bench/lexical.ts',
    at: new Date().toISOString(),
    engines: { recall: 'EmbeddedLexicalIndex (segments, MaxScore loop)', lucene: lucene.version },
    measured: 'per query: analysis + top 50, one thread, in process (recall) and in the JVM (Lucene); no HTTP',
    corpus: `CMRC 2018 trial paragraphs chunked (${real.length} chunks), then synthetic one-chunk documents of recombined CMRC sentences`,
    machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version, loadavg_1m_at_start: loadAtStart[0], loadavg_1m_at_end: loadavg()[0] },
    results
  }
  await writeFile('bench/results/lexical.json', `${JSON.stringify(out, null, 2)}\n`)
  console.log(JSON.stringify(out.results.map((r) => ({ chunks: r.chunks, query: r.query })), null, 1))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
