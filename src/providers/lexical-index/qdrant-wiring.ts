import type { Config } from '../../config.js'
import { lexicalText } from '../../kernel/lexical-text.js'
import type { AttachedSparseVector } from '../vector-store/qdrant.js'
import { LEXICAL_VECTOR, lexicalPoint } from './lexical-point.js'
import { QdrantLexicalIndexes } from './qdrant.js'

/**
 * The lexical leg on Qdrant as the service wires it: the chunk collection's points carry it (the vector store
 * writes it with every chunk point) and the lexical indexes read it there.
 */
export function lexicalLegOnQdrant(config: Config, collection: string): { sparse: AttachedSparseVector; lexical: QdrantLexicalIndexes } {
  if (config.vector.backend !== 'qdrant') throw new Error('the lexical leg on Qdrant needs VECTOR_BACKEND=qdrant')
  const sparse: AttachedSparseVector = {
    collection,
    name: LEXICAL_VECTOR,
    encode(record) {
      const p = record.payload
      const chunkIndex = typeof p.chunk_index === 'number' ? p.chunk_index : 0
      const lex = lexicalPoint(lexicalText({ text: p.text, chunk_index: chunkIndex, ...(typeof p.title === 'string' ? { title: p.title } : {}) }))
      return { vector: lex.sparse, payload: { ...lex.payload } }
    }
  }
  const lexical = new QdrantLexicalIndexes({
    url: config.vector.url, ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}),
    timeoutMs: config.timeouts.lexical, writeTimeoutMs: config.timeouts.vectorWrite, collection, points: 'vector-store'
  })
  return { sparse, lexical }
}
