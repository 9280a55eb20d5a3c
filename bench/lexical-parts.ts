/**
 * Where a lexical search on Qdrant spends its time, part by part, each part timed alone (one request
 * at a time, or the part's parallel requests together) over the same chunks as bench/replicas.ts.
 * Writes bench/results/lexical-parts-<chunks>.json.
 *
 *   QDRANT_URL=http://127.0.0.1:6333 nice -n 10 npx tsx bench/lexical-parts.ts [--chunks 10000] [--questions 100] [--collection name]
 *
 * The collection `lexparts_<chunks>` is kept between runs (loaded once; pass --reload to write it again);
 * `--collection` reads one that bench/replicas.ts left (its `bench_replicas_<pid>`, namespace `default`);
 * `--df-probe` sets the search's df listing length (default 1,024).
 */
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { analyze } from '../src/kernel/cjk-analyzer.js'
import { LEXICAL_VECTOR, WEIGHTED_VECTOR } from '../src/providers/lexical-index/lexical-point.js'
import { QdrantLexicalIndexes } from '../src/providers/lexical-index/qdrant.js'
import { tokenId } from '../src/providers/lexical-index/token-id.js'
import { loadCmrc } from './lib/cmrc.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: {
  chunks: { type: 'string', default: '10000' }, questions: { type: 'string', default: '100' }, reload: { type: 'boolean', default: false },
  collection: { type: 'string' }, 'df-probe': { type: 'string' }
} })
const CHUNKS = Number(values.chunks)
const QUESTIONS = Number(values.questions)
const url = process.env.QDRANT_URL
if (!url) throw new Error('set QDRANT_URL to a running Qdrant (../shared/qdrant/qdrant-run)')

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.floor(s.length / 2)]! * 1000) / 1000
}
const timed = async (into: number[], f: () => Promise<unknown>) => {
  const t = performance.now()
  await f()
  into.push(performance.now() - t)
}

const collection = values.collection ?? `lexparts_${CHUNKS}`
const indexes = new QdrantLexicalIndexes({
  url, timeoutMs: 120_000, collection, points: 'own', batchSize: 500, ...(values['df-probe'] ? { dfProbe: Number(values['df-probe']) } : {})
})
const index = indexes.get('default')
const { client } = indexes
const ns = { key: 'namespace', match: { value: 'default' } }
const { documents, queries } = await loadCmrc()
const exists = (await client.collectionExists(collection)).exists
if (!values.collection && (values.reload || !exists || (await client.count(collection, { exact: true })).count !== CHUNKS)) {
  const chunks = syntheticDocuments(documents.map((d) => d.text), CHUNKS).map((d) => ({ id: d.id, text: d.text }))
  const t = performance.now()
  await index.sync(chunks)
  console.log(`loaded ${chunks.length} chunks in ${Math.round(performance.now() - t)} ms`)
}
const asked = queries.slice(0, QUESTIONS).map((q) => q.query)
const parts = {
  facet_lengths: [] as number[], count_without_lexw: [] as number[], smallest_reference: [] as number[],
  df_listing_1024: [] as number[], count_one_token: [] as number[], counts_frequent_parallel: [] as number[],
  candidates_56: [] as number[], candidates_56_ids_only: [] as number[], postings_all_tokens: [] as number[], search: [] as number[]
}
const frequentPerQuestion: number[] = []
const tokensPerQuestion: number[] = []
for (const q of asked.slice(0, 5)) await index.search(q, 10)
for (const q of asked) {
  const tokens = [...new Set(analyze(q))]
  if (tokens.length === 0) continue
  tokensPerQuestion.push(tokens.length)
  await timed(parts.facet_lengths, () => client.facet(collection, { key: 'lex_len', exact: true, limit: 2048, filter: { must: [ns] } }))
  await timed(parts.count_without_lexw, () => client.count(collection, { exact: true, filter: { must: [ns, { is_empty: { key: 'lex_aref' } }] } }))
  await timed(parts.smallest_reference, () => client.scroll(collection, {
    limit: 1, filter: { must: [ns] }, order_by: { key: 'lex_aref', direction: 'asc' }, with_payload: { include: ['lex_aref'] }, with_vector: false
  }))
  let listed: number[] = []
  await timed(parts.df_listing_1024, async () => {
    const answers = await client.queryBatch(collection, { searches: tokens.map((t) => ({
      query: { indices: [tokenId(t)], values: [1] }, using: LEXICAL_VECTOR, filter: { must: [ns, { key: 'lex_terms', match: { value: t } }] },
      limit: 1024, with_payload: false, with_vector: false
    })) })
    listed = answers.map((a) => a.points.length)
  })
  const frequent = tokens.filter((_, i) => listed[i]! >= 1024)
  frequentPerQuestion.push(frequent.length)
  await timed(parts.count_one_token, () => client.count(collection, { exact: true, filter: { must: [ns, { key: 'lex_terms', match: { value: tokens[0]! } }] } }))
  if (frequent.length > 0) {
    await timed(parts.counts_frequent_parallel, () => Promise.all(frequent.map((t) =>
      client.count(collection, { exact: true, filter: { must: [ns, { key: 'lex_terms', match: { value: t } }] } }))))
  }
  const vector = { indices: [...new Set(tokens.map(tokenId))].sort((a, b) => a - b), values: [] as number[] }
  vector.values = vector.indices.map(() => 1)
  await timed(parts.candidates_56, () => client.query(collection, {
    query: vector, using: WEIGHTED_VECTOR, filter: { must: [ns] }, limit: 56,
    with_payload: { include: ['id', 'lex_len', 'lex_terms', 'lex_split'] }, with_vector: [LEXICAL_VECTOR]
  }))
  await timed(parts.candidates_56_ids_only, () => client.query(collection, {
    query: vector, using: WEIGHTED_VECTOR, filter: { must: [ns] }, limit: 56, with_payload: { include: ['id'] }, with_vector: false
  }))
  await timed(parts.postings_all_tokens, () => client.queryBatch(collection, {
    searches: tokens.map((t) => ({
      query: { indices: [tokenId(t)], values: [1] }, using: LEXICAL_VECTOR,
      filter: { must: [ns, { key: 'lex_terms', match: { value: t } }] }, limit: CHUNKS,
      with_payload: { include: ['id', 'lex_len', 'lex_split'] }, with_vector: false
    }))
  }))
  await timed(parts.search, () => index.search(q, 10))
}
const result = {
  chunks: CHUNKS,
  df_probe: values['df-probe'] ? Number(values['df-probe']) : 1024,
  questions: tokensPerQuestion.length,
  distinct_tokens_per_question: { median: median(tokensPerQuestion) },
  tokens_past_the_df_listing_per_question: { median: median(frequentPerQuestion), max: Math.max(...frequentPerQuestion) },
  counts_frequent_parallel_note: 'median over the questions that had such tokens',
  median_ms: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, median(v)])),
  machine: { cpus: cpus().length, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
  when: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
await indexes.close()
await writeFile(new URL(`./results/lexical-parts-${CHUNKS}${values['df-probe'] ? `-probe${values['df-probe']}` : ''}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
