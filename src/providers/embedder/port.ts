import type { BackendHealth } from '../errors.js'

/**
 * Turns text into dense vectors.
 *
 * - Vectors have exactly `dimensions` components and unit L2 norm, so a dot product is the cosine.
 * - `embedQueries` applies the model's query instruction (bge: `为这个句子生成表示以用于检索相关文章：`);
 *   `embedPassages` embeds the text as is. The two must not be mixed up, or recall drops.
 * - Output order equals input order; an empty input gives an empty output without a backend call.
 * - Failures are thrown as the provider errors of `../errors.ts`.
 */
export interface Embedder {
  /** Stable name of the model, used in cache keys (e.g. `bge-small-zh-v1.5`). */
  readonly model: string
  readonly dimensions: number
  /** With `signal`: a run still queued when it aborts is dropped, and the promise rejects (`abortError`). */
  embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>
  embedPassages(texts: readonly string[]): Promise<Float32Array[]>
  /** The runs waiting for the model, for an embedder that queues them (the local one); none otherwise. */
  backlog?(): EmbeddingBacklog | undefined
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

/** Model runs waiting their turn. */
export interface EmbeddingBacklog {
  queued: number
  /** How long the oldest waiting run has waited, in milliseconds. */
  oldestWaitMs: number
  /**
   * How long a run queued now would wait, in milliseconds: the runs ahead of it times the recent mean
   * duration of a run (which grows when other processes take the cores).
   */
  expectedWaitMs: number
}
