import { join } from 'node:path'
import type { Config } from '../../config.js'
import { decodeChunk } from '../../kernel/chunk-payload.js'
import { lexicalText } from '../../kernel/lexical-text.js'
import type { AttachedSparseVector } from '../vector-store/qdrant.js'
import type { VectorRecord } from '../vector-store/port.js'
import { analyzeBatch, LEXICAL_VECTOR, lexicalPointOf, WEIGHTED_VECTOR } from './lexical-point.js'
import { QdrantLexicalIndexes } from './qdrant.js'
import type { QdrantLexicalIndexesOptions } from './qdrant-collection.js'

/** What the service tells the lexical leg on Qdrant (see `QdrantLexicalIndexesOptions`). */
export interface LexicalLegWiring {
  /** The namespace's stamp of its lexical contents (the shared hybrid version); none: statistics are never reused. */
  statisticsStamp?: QdrantLexicalIndexesOptions['statisticsStamp']
  /** When the local copy may answer: `sole-writer`, or a check of the stamp; none: never. */
  localCopyComplete?: 'sole-writer' | ((namespace: string, stamp: string) => boolean)
  onSearch?: QdrantLexicalIndexesOptions['onSearch']
}

const textOf = (record: VectorRecord): string => lexicalText(decodeChunk(record.id, record.payload))

/**
 * The lexical leg on Qdrant as the service wires it: the chunk collection's points carry it (the vector store
 * writes it with every chunk point) and the lexical indexes read it there. A write's reference length is the
 * namespace's average length as this process last read it, else (a namespace it has not read) the batch's own.
 */
export function lexicalLegOnQdrant(config: Config, collection: string, options: { localCopy?: boolean } & LexicalLegWiring = {}): { sparse: AttachedSparseVector; lexical: QdrantLexicalIndexes } {
  if (config.vector.backend !== 'qdrant') throw new Error('the lexical leg on Qdrant needs VECTOR_BACKEND=qdrant')
  const analyzed = new WeakMap<readonly VectorRecord[], { tokens: Map<VectorRecord, string[]>; averageLength: number }>()
  const sparse: AttachedSparseVector = {
    collection,
    names: [LEXICAL_VECTOR, WEIGHTED_VECTOR],
    encode(record, namespace, batch) {
      let held = analyzed.get(batch)
      if (!held) {
        const { tokens, averageLength } = analyzeBatch(batch.map(textOf), config.lexical.analyzer)
        held = { tokens: new Map(batch.map((r, i) => [r, tokens[i]!])), averageLength }
        analyzed.set(batch, held)
      }
      const tokens = held.tokens.get(record) ?? analyzeBatch([textOf(record)], config.lexical.analyzer).tokens[0]!
      const lex = lexicalPointOf(tokens, lexical.knownAverageLength(namespace) ?? held.averageLength)
      return { vectors: { [LEXICAL_VECTOR]: lex.sparse, [WEIGHTED_VECTOR]: lex.weighted }, payload: { ...lex.payload } }
    }
  }
  const lexical = new QdrantLexicalIndexes({
    url: config.vector.url, ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}),
    timeoutMs: config.timeouts.lexical, writeTimeoutMs: config.timeouts.vectorWrite, collection, points: 'vector-store', cluster: config.vector.cluster,
    analyzer: config.lexical.analyzer,
    ...(options.statisticsStamp ? { statisticsStamp: options.statisticsStamp } : {}),
    ...(options.onSearch ? { onSearch: options.onSearch } : {}),
    // trusted only where the caller says who writes (the service), never otherwise (a CLI)
    ...(options.localCopy ? { localCopy: { dir: join(config.dataDir, `bm25-copy${config.lexical.folderSuffix}`), complete: options.localCopyComplete ?? (() => false) } } : {})
  })
  return { sparse, lexical }
}
