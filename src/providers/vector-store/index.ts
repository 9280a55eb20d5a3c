import { EmbeddedVectorStore, type EmbeddedVectorStoreOptions } from './embedded.js'
import type { VectorStore } from './port.js'
import { QdrantVectorStore, type QdrantVectorStoreOptions } from './qdrant.js'

export type VectorStoreOptions =
  | ({ backend: 'memory' } & EmbeddedVectorStoreOptions)
  | ({ backend: 'qdrant' } & QdrantVectorStoreOptions)

/** The vector store that `options.backend` names; opens no connection and reads no files until first used. */
export function createVectorStore(options: VectorStoreOptions): VectorStore {
  switch (options.backend) {
    case 'memory': {
      const { backend: _, ...rest } = options
      return new EmbeddedVectorStore(rest)
    }
    case 'qdrant': {
      const { backend: _, ...rest } = options
      return new QdrantVectorStore(rest)
    }
    default: {
      const unknown: never = options
      throw new Error(`unknown vector backend ${String((unknown as { backend: unknown }).backend)}`)
    }
  }
}
