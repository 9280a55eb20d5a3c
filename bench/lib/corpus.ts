import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHybridAdapter, HYBRID_DEFAULTS, type HybridCorpus as AdapterCorpus, type HybridRequest } from '../../adapters/hybrid/index.js'
import type { ModeAdapter } from '../../adapters/types.js'
import { loadConfig } from '../../src/config.js'
import type { DocumentLibrary } from '../../src/corpus/documents/library.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import type { LexicalIndex } from '../../src/providers/lexical-index/port.js'
import type { AnalyzerName } from '../../src/kernel/analyzers.js'
import { openServices, type Services } from '../../src/services.js'

/**
 * The config of a bench that loads documents through `corpus.write` to measure the hybrid leg: the write derives no
 * graph and no Episodes, as the library's own ingest did before the benches wrote through the write path.
 */
export const DOCUMENTS_ONLY = { DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' } as const

export interface HybridCorpus {
  embedder: Embedder
  library: DocumentLibrary
  adapter: ModeAdapter<HybridRequest>
  /** Builds another adapter over the same vectors with a different lexical analyzer. */
  withAnalyzer(analyzer: AnalyzerName): Promise<ModeAdapter<HybridRequest>>
  ingestSeconds: number
  close(): Promise<void>
}

export const modelDir = () => process.env.MODEL_DIR ?? join(import.meta.dirname, '../../models')

/** Embeds queries in batches up front, so that a run measures retrieval, not one-at-a-time embedding. */
export class PrecomputedQueries implements Embedder {
  private readonly cache = new Map<string, Float32Array>()
  constructor(private readonly inner: Embedder) {}
  get model() { return this.inner.model }
  get dimensions() { return this.inner.dimensions }
  async prepare(queries: readonly string[], batch = 32): Promise<void> {
    const todo = [...new Set(queries)].filter((q) => !this.cache.has(q))
    for (let i = 0; i < todo.length; i += batch) {
      const slice = todo.slice(i, i + batch)
      const vectors = await this.inner.embedQueries(slice)
      slice.forEach((q, j) => this.cache.set(q, vectors[j]!))
    }
  }
  async embedQueries(texts: readonly string[]) {
    return Promise.all(texts.map(async (t) => this.cache.get(t) ?? (await this.inner.embedQueries([t]))[0]!))
  }
  embedPassages(texts: readonly string[]) { return this.inner.embedPassages(texts) }
  health() { return this.inner.health() }
  close() { return this.inner.close() }
}

/** Services on the embedded stores in a temporary folder, which a bench writes through (`services.writePath.write`). */
export interface BenchServices {
  services: Services
  dir: string
  close(): Promise<void>
}

/**
 * The caller's embedder as the services see it: every call goes to it, but closing the services leaves it open (a
 * bench builds several corpora over one embedder).
 */
export function borrowed(embedder: Embedder): Embedder {
  return new Proxy(embedder, {
    get(target, property) {
      if (property === 'close') return async () => {}
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    }
  })
}

/**
 * The variables of a bench's services over `dataDir`: no demo world, no derived graph or Episodes, no entity names, no
 * query-embedding cache, the model in this process. `env` adds or overrides variables.
 */
export function benchEnv(dataDir: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: modelDir(), LOG_LEVEL: 'silent', ...DOCUMENTS_ONLY, ENTITY_VECTORS: 'false',
    EMBEDDING_CACHE_TTL_SECONDS: '0', EMBEDDING_SESSIONS: '0', ...env
  }
}

/** Opens the service's own stores and write path over `embedder` (`benchEnv`), so that a bench writes as the service does. */
export async function openBenchServices(embedder: Embedder, env: Record<string, string> = {}): Promise<BenchServices> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-'))
  const config = loadConfig(benchEnv(dir, env))
  const services = await openServices(config, { providers: (base) => ({ ...base, embedder: borrowed(embedder) }) })
  return {
    services, dir,
    async close() {
      await services.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}

/** A hybrid corpus in process on the embedded stores (temporary folder) and the real local model, written through the write path. */
export async function buildHybridCorpus(documents: readonly DocumentInput[], embedder: Embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })): Promise<HybridCorpus> {
  const opened = await openBenchServices(embedder)
  const { services, dir } = opened
  const started = performance.now()
  for (let i = 0; i < documents.length; i += 200) {
    await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: documents.slice(i, i + 200) })
  }
  const ingestSeconds = (performance.now() - started) / 1000
  const library = services.documents.get('default')
  if (!library) throw new Error('buildHybridCorpus: no document was written')
  const { vectors } = services
  const timeouts = { embedding: 60_000, vector: 60_000, lexical: 60_000 }
  /** The library's corpus with another lexical index. */
  const over = (lexical: LexicalIndex): AdapterCorpus => ({
    collection: library.collection, namespace: library.namespace, lexical,
    get chunkCount() { return library.chunkCount },
    chunk: (id) => library.chunk(id),
    docIdsWithSourcePrefix: (prefix) => library.docIdsWithSourcePrefix(prefix)
  })
  const adapter = createHybridAdapter({ vectors, embedder, corpus: () => library }, { ...HYBRID_DEFAULTS, timeouts })
  return {
    embedder, library, adapter, ingestSeconds,
    async withAnalyzer(analyzer) {
      const other = new EmbeddedLexicalIndex({ dir: join(dir, `bm25-${analyzer}`), analyzer })
      await other.sync(library.list().flatMap((d) => Array.from({ length: d.chunks }, (_, i) => library.chunk(`${d.id}#${i}`)!))
        .map((c) => ({ id: c.id, text: c.text })))
      return createHybridAdapter({ vectors, embedder, corpus: () => over(other) }, { ...HYBRID_DEFAULTS, timeouts })
    },
    close: () => opened.close()
  }
}
