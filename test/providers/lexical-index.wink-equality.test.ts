import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createWink from 'wink-bm25-text-search'
import { afterAll, describe, expect, it } from 'vitest'
import { loadCmrc } from '../../bench/lib/cmrc.js'
import { rng, syntheticDocuments } from '../../bench/lib/synthetic.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { readDocuments } from '../../src/corpus/files.js'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import type { LexicalDocument } from '../../src/providers/lexical-index/port.js'
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import { CMRC_TRIAL } from '../helpers/reference-data.js'

/**
 * CMRC 2018 trial when it is there (CMRC_PATH or RECALL_SHARED_DIR); else a corpus made from the demo
 * documents (bench/lib/synthetic.ts) with queries cut from its own sentences, so a clone without the
 * reference data still runs every check.
 */
async function corpus(): Promise<{ documents: DocumentInput[]; queries: string[] }> {
  if (CMRC_TRIAL.available) {
    const { documents, queries } = await loadCmrc()
    return { documents, queries: queries.map((q) => q.query) }
  }
  const paragraphs = (await readDocuments([join(import.meta.dirname, '../../demo/documents')])).flatMap(chunkDocument).map((c) => c.text)
  const documents = syntheticDocuments(paragraphs, 1200)
  const random = rng(11)
  const queries = Array.from({ length: 1000 }, () => {
    const chars = [...documents[Math.floor(random() * documents.length)]!.text]
    const length = 4 + Math.floor(random() * 12)
    const start = Math.floor(random() * Math.max(1, chars.length - length))
    return chars.slice(start, start + length).join('')
  })
  return { documents, queries }
}

// wink-bm25-text-search is the reference: a wink index built from scratch over the live documents, with the
// same analyzer, must give every matching document the same score as the segmented index after a history
// of adds, replacements and deletes (merges running or not, reopened from disk or not).
function winkScores(docs: readonly LexicalDocument[]): (query: string) => Map<string, number> {
  const engine = createWink()
  engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { k1: 1.2, b: 0.75, k: 1 } })
  const split = (joined: string) => (joined === '' ? [] : joined.split(' '))
  engine.definePrepTasks([split])
  for (const d of docs) engine.addDoc({ body: analyze(d.text).join(' ') }, d.id)
  engine.consolidate()
  return (query) => new Map(engine.search(analyze(query).join(' '), docs.length).filter(([, s]) => s > 0))
}

function expectSameScores(ours: { id: string; score: number }[], reference: Map<string, number>, query: string): void {
  expect(ours.length, query).toBe(reference.size)
  for (const hit of ours) {
    // both sum weights rounded to 4 decimals; only the order of the float additions differs
    expect(Math.abs(hit.score - reference.get(hit.id)!), `${query}: ${hit.id}`).toBeLessThan(1e-9)
  }
  for (let i = 1; i < ours.length; i++) {
    const [a, b] = [ours[i - 1]!, ours[i]!]
    expect(a.score > b.score || (a.score === b.score && a.id < b.id), `${query}: order at ${i}`).toBe(true)
  }
}

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe(`segmented BM25 equals wink-bm25-text-search on ${CMRC_TRIAL.available ? 'CMRC' : 'a corpus made from the demo documents'}`, () => {
  it('after adds, replacements and deletes, for every question of a sample', async () => {
    const { documents, queries } = await corpus()
    const chunks = documents.flatMap((d) => chunkDocument(d)).map((c) => ({ id: c.id, text: c.text }))
    const dir = await mkdtemp(join(tmpdir(), 'recall-wink-eq-'))
    dirs.push(dir)
    const index = new EmbeddedLexicalIndex({ dir })
    const live = new Map<string, string>()
    // adds in small writes (many segments, merges in the background)
    for (let i = 0; i < chunks.length; i += 40) {
      const batch = chunks.slice(i, i + 40)
      await index.write({ upsert: batch })
      for (const c of batch) live.set(c.id, c.text)
    }
    // replacements: every 7th chunk gets another chunk's text; deletes: every 11th chunk
    for (let i = 0; i < chunks.length; i += 7) {
      const text = chunks[(i * 13 + 5) % chunks.length]!.text
      await index.write({ upsert: [{ id: chunks[i]!.id, text }] })
      live.set(chunks[i]!.id, text)
    }
    const gone = chunks.filter((_, i) => i % 11 === 3).map((c) => c.id)
    for (let i = 0; i < gone.length; i += 9) {
      await index.write({ delete: gone.slice(i, i + 9) })
      for (const id of gone.slice(i, i + 9)) live.delete(id)
    }
    const reference = winkScores([...live].map(([id, text]) => ({ id, text })))
    const sample = queries.filter((_, i) => i % 4 === 0)
    expect(index.size).toBe(live.size)
    for (const q of sample) expectSameScores(await index.search(q, 100_000), reference(q), q)

    await index.idle()
    const reopened = new EmbeddedLexicalIndex({ dir })
    for (const q of sample.slice(0, 100)) expectSameScores(await reopened.search(q, 100_000), reference(q), q)
    // top 10 after merging equals the reference's top 10 by score, then id
    for (const q of sample.slice(0, 100)) {
      const expected = [...reference(q)].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10).map(([id]) => id)
      expect((await reopened.search(q, 10)).map((h) => h.id), q).toEqual(expected)
    }
    await reopened.close()
    await index.close()
  }, 240_000)
})
