import { join } from 'node:path'
import type { Config } from './config.js'
import { DocumentLibrary } from './ingest/documents.js'
import { createEmbedder } from './providers/embedder/index.js'
import type { Embedder } from './providers/embedder/port.js'
import type { BackendHealth } from './providers/errors.js'
import { createLexicalIndex } from './providers/lexical-index/index.js'
import type { LexicalIndex } from './providers/lexical-index/port.js'
import { createVectorStore } from './providers/vector-store/index.js'
import type { VectorStore } from './providers/vector-store/port.js'

/** The providers of one running service, created from config (or handed in by tests). */
export interface Providers {
  embedder: Embedder
  vectors: VectorStore
  lexical: LexicalIndex
}

export interface Services extends Providers {
  config: Config
  documents: DocumentLibrary
  health(): Promise<BackendHealth[]>
  close(): Promise<void>
}

export function createProviders(config: Config): Providers {
  const embedder = createEmbedder(
    config.embedder.backend === 'local'
      ? { backend: 'local', modelDir: config.embedder.modelDir, modelName: config.embedder.model }
      : {
          backend: 'openai', url: config.embedder.url, model: config.embedder.model, timeoutMs: config.timeouts.embedding,
          ...(config.embedder.apiKey ? { apiKey: config.embedder.apiKey } : {}),
          ...(config.embedder.dimensions ? { dimensions: config.embedder.dimensions } : {})
        }
  )
  const vectors = createVectorStore(
    config.vector.backend === 'qdrant'
      ? { backend: 'qdrant', url: config.vector.url, timeoutMs: config.timeouts.vector, ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}) }
      : { backend: 'memory', dir: join(config.dataDir, 'vectors') }
  )
  const lexical = createLexicalIndex({ persistPath: join(config.dataDir, 'bm25', 'chunks.json') })
  return { embedder, vectors, lexical }
}

/** Opens the stores and derived indexes; `providers` defaults to the ones config names. */
export async function openServices(config: Config, providers: Providers = createProviders(config)): Promise<Services> {
  const documents = new DocumentLibrary(providers, { collection: `${config.collectionPrefix}chunks` })
  await documents.open()
  return {
    ...providers,
    config,
    documents,
    async health() {
      return Promise.all([providers.embedder.health(), providers.vectors.health(), providers.lexical.health()])
    },
    async close() {
      await Promise.allSettled([providers.embedder.close(), providers.vectors.close(), providers.lexical.close()])
    }
  }
}
