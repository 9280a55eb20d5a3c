/**
 * What removes a namespace from another local model's stores (src/corpus/model-stores.ts says where they are): the
 * namespace applier's drop and the re-embed applier's last step.
 */
import { createLexicalIndexes } from '../../../providers/lexical-index/index.js'
import type { VectorStore } from '../../../providers/vector-store/port.js'
import { collectionsOf, type ModelStores } from '../../model-stores.js'

/** Removes a namespace from one model's collections and its embedded lexical folders (none of which need be open). */
export async function dropFromModel(vectors: VectorStore, stores: ModelStores, namespace: string): Promise<void> {
  await Promise.all(collectionsOf(stores).map((c) => vectors.dropNamespace(c, namespace)))
  for (const dir of stores.lexicalDirs) {
    const lexical = createLexicalIndexes({ dir, name: 'chunks' })
    try {
      await lexical.drop(namespace)
    } finally {
      await lexical.close()
    }
  }
}
