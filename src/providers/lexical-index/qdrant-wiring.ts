import { join } from 'node:path'
import type { Config } from '../../config.js'
import { lexicalText } from '../../kernel/lexical-text.js'
import type { AttachedSparseVector } from '../vector-store/qdrant.js'
import type { VectorRecord } from '../vector-store/port.js'
import { analyzeBatch, LEXICAL_VECTOR, lexicalPointOf, WEIGHTED_VECTOR } from './lexical-point.js'
import { QdrantLexicalIndexes } from './qdrant.js'

const textOf = (record: VectorRecord): string => {
  const p = record.payload
  return lexicalText({
    text: String(p.text ?? ''), ...(typeof p.title === 'string' ? { title: p.title } : {}),
    ...(Array.isArray(p.heading_path) ? { heading_path: p.heading_path.map(String) } : {})
  })
}

/**
 * The lexical leg on Qdrant as the service wires it: the chunk collection's points carry it (the vector store
 * writes it with every chunk point) and the lexical indexes read it there. A write's reference length is the
 * namespace's average length as this process last read it, else (a namespace it has not read) the batch's own.
 */
export function lexicalLegOnQdrant(config: Config, collection: string, options: { localCopy?: boolean } = {}): { sparse: AttachedSparseVector; lexical: QdrantLexicalIndexes } {
  if (config.vector.backend !== 'qdrant') throw new Error('the lexical leg on Qdrant needs VECTOR_BACKEND=qdrant')
  const analyzed = new WeakMap<readonly VectorRecord[], { tokens: Map<VectorRecord, string[]>; averageLength: number }>()
  const sparse: AttachedSparseVector = {
    collection,
    names: [LEXICAL_VECTOR, WEIGHTED_VECTOR],
    encode(record, namespace, batch) {
      let held = analyzed.get(batch)
      if (!held) {
        const { tokens, averageLength } = analyzeBatch(batch.map(textOf))
        held = { tokens: new Map(batch.map((r, i) => [r, tokens[i]!])), averageLength }
        analyzed.set(batch, held)
      }
      const tokens = held.tokens.get(record) ?? analyzeBatch([textOf(record)]).tokens[0]!
      const lex = lexicalPointOf(tokens, lexical.knownAverageLength(namespace) ?? held.averageLength)
      return { vectors: { [LEXICAL_VECTOR]: lex.sparse, [WEIGHTED_VECTOR]: lex.weighted }, payload: { ...lex.payload } }
    }
  }
  const lexical = new QdrantLexicalIndexes({
    url: config.vector.url, ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}),
    timeoutMs: config.timeouts.lexical, writeTimeoutMs: config.timeouts.vectorWrite, collection, points: 'vector-store',
    // the service's (not a CLI's): trusted once the service knows who writes (`trustLocalCopyWhen`), never before
    ...(options.localCopy ? { localCopy: { dir: join(config.dataDir, 'bm25-copy'), complete: () => false } } : {})
  })
  return { sparse, lexical }
}
