import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { createEpisodicAdapter, type EpisodicRequest } from '../../adapters/episodic/index.js'
import type { ModeAdapter } from '../../adapters/types.js'
import type { EpisodicIngestResult } from '../../src/corpus/episodes/results.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import { openBenchServices } from './corpus.js'

const DEMO_QUESTIONS = resolve(import.meta.dirname, '../episodic-quality/questions.jsonl')
export const DEMO_EPISODES = resolve(import.meta.dirname, '../../demo/episodes.json')
/** The demo's events run to January 2026; a fixed clock keeps relative times out of the way. */
export const DEMO_NOW = Date.parse('2026-01-20T12:00:00Z')

/** One question of `bench/episodic-quality/questions.jsonl`. */
export interface EpisodicQuestion {
  query: string
  /** The Episodes that answer it. */
  relevant_ids: string[]
  /** A string of the demo documents' answering passage: a hybrid chunk that contains it counts. */
  answer: string
}

export async function loadQuestions(file = DEMO_QUESTIONS): Promise<EpisodicQuestion[]> {
  return (await readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as EpisodicQuestion)
}

/** Embeds each text on its own and remembers it: a vector that does not depend on its batch neighbours. */
export class MemoEmbedder implements Embedder {
  private readonly memo = new Map<string, Float32Array>()
  constructor(private readonly inner: Embedder) {}
  get model() { return this.inner.model }
  get dimensions() { return this.inner.dimensions }
  async embedQueries(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = []
    for (const t of texts) {
      let v = this.memo.get(t)
      if (!v) {
        v = (await this.inner.embedQueries([t]))[0]!
        this.memo.set(t, v)
      }
      out.push(v)
    }
    return out
  }
  embedPassages(texts: readonly string[]) { return this.inner.embedPassages(texts) }
  health() { return this.inner.health() }
  close() { return this.inner.close() }
}

export interface EpisodicMemory {
  adapter: ModeAdapter<EpisodicRequest>
  ingested: EpisodicIngestResult
  close(): Promise<void>
}

/** An episodic memory in process on the embedded stores (temporary folder), written through the write path as the service writes. */
export async function buildEpisodicMemory(body: unknown, embedder: Embedder, now = DEMO_NOW): Promise<EpisodicMemory> {
  const opened = await openBenchServices(embedder)
  const { services } = opened
  const ingested = await services.writePath.write('default', { kind: 'episodes', op: 'upsert', body })
  const adapter = createEpisodicAdapter({ graph: services.episodes, vectors: services.vectors, embedder }, {
    collectionPrefix: services.config.collectionPrefix, now: () => now, timeouts: { embedding: 60_000, vector: 60_000, graph: 60_000 }
  })
  return { adapter, ingested, close: () => opened.close() }
}

/** 1-based rank of the first item `isHit` accepts within the first `k`, or null. */
export function firstHitRank<T>(items: readonly T[], isHit: (item: T) => boolean, k = 10): number | null {
  const at = items.slice(0, k).findIndex(isHit)
  return at < 0 ? null : at + 1
}

export interface RankFigures {
  questions: number
  /** Share of questions whose first item is a hit. */
  top_1: number
  /** Share with a hit among the first three. */
  top_3: number
  mrr_at_10: number
}

/** top-1, top-3 and MRR@10 from each question's first-hit rank (null: no hit in the first ten). */
export function rankFigures(ranks: readonly (number | null)[]): RankFigures {
  const n = ranks.length || 1
  const share = (f: (r: number) => boolean) => Math.round((ranks.filter((r) => r !== null && f(r)).length / n) * 10_000) / 10_000
  const mrr = ranks.reduce<number>((s, r) => s + (r !== null && r <= 10 ? 1 / r : 0), 0) / n
  return { questions: ranks.length, top_1: share((r) => r === 1), top_3: share((r) => r <= 3), mrr_at_10: Math.round(mrr * 10_000) / 10_000 }
}

/** Runs one question through the episodic adapter under a normalisation rule. */
export async function askEpisodic(
  memory: EpisodicMemory,
  question: { query: string; relevant_ids: readonly string[] },
  normalisation: 'query' | 'collection'
): Promise<{ rank: number | null; top: string[]; tied: boolean }> {
  const result = await memory.adapter.retrieve({ query: question.query, top_k: 10, normalisation })
  const relevant = new Set(question.relevant_ids)
  return {
    rank: firstHitRank(result.items, (i) => relevant.has(i.id)),
    top: result.items.slice(0, 3).map((i) => i.id),
    tied: result.tie !== undefined
  }
}
