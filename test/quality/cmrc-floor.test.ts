import { afterAll, beforeAll, expect, it } from 'vitest'
import { loadCmrc, type LabelledQuery } from '../../bench/lib/cmrc.js'
import { buildHybridCorpus, modelDir, PrecomputedQueries, type HybridCorpus } from '../../bench/lib/corpus.js'
import { measure } from '../../bench/lib/quality.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'

// The development set is reference data (CMRC_PATH or RECALL_SHARED_DIR): CI always has it; elsewhere the
// floor is skipped with one line rather than failing a checkout that lacks it.
describeWith(CMRC_TRIAL)('hybrid quality floor on CMRC 2018 trial', () => {
  let corpus: HybridCorpus
  let queries: LabelledQuery[]
  beforeAll(async () => {
    const set = await loadCmrc()
    queries = set.queries
    const embedder = new PrecomputedQueries(new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' }))
    corpus = await buildHybridCorpus(set.documents, embedder)
    await embedder.prepare(queries.map((q) => q.query))
  }, 900_000)
  afterAll(async () => corpus?.close())

  it('hybrid Recall@5 is at least the better single leg\'s minus one point', async () => {
    const lexical = await measure(corpus.adapter, queries, { legs: ['lexical'] })
    const vector = await measure(corpus.adapter, queries, { legs: ['vector'] })
    const hybrid = await measure(corpus.adapter, queries, {})
    console.info(`Recall@5 lexical ${lexical.recall_at_5}, vector ${vector.recall_at_5}, hybrid ${hybrid.recall_at_5}`)
    expect(hybrid.queries).toBe(1002)
    expect(hybrid.recall_at_5).toBeGreaterThanOrEqual(Math.max(lexical.recall_at_5, vector.recall_at_5) - 0.01)
  }, 600_000)
})
