/** The namespace applier: `DELETE /namespaces/{namespace}` removes the namespace from every store. */
import { DERIVED_COLLECTION_PREFIX, EPISODIC_COLLECTIONS } from '../../providers/episodic-graph/collections.js'
import { IMAGES_COLLECTION } from '../images/image-records.js'
import { countNamespace, type NamespaceCounts, type NamespaceStores } from '../namespaces.js'
import type { Exclusive } from '../write-lock.js'
import { entityCollectionOf } from '../entity-vectors.js'
import { heldChunks, otherModelStores } from '../model-stores.js'
import { dropFromModel } from './writers/model-drops.js'
import { dropDocuments } from './writers/documents.js'

/**
 * Removes a namespace from every store: its chunks and their lexical index, its pictures, its vectors in every episodic
 * collection, its episodic graph and its knowledge graph, each store's part taking its kind's turn (`exclusive`);
 * and whatever other local models' collections and lexical folders hold of it (a namespace made with another model,
 * or a re-embed cut short), so that a service on any model can drop it. The write path catches up first and records
 * the write in every mode, so that no cached answer outlives it.
 * Returns what it held, or undefined when it held nothing. Not atomic across stores; a failed removal can be run again.
 */
export async function applyNamespaceDrop(
  services: NamespaceStores, namespace: string, exclusive: Record<'documents' | 'graph' | 'episodes', Exclusive>
): Promise<NamespaceCounts | undefined> {
  const held = await countNamespace(services, namespace)
  const { config, vectors } = services
  const others = otherModelStores(config)
  // the other models' chunks count too: the answer says what the namespace held, whichever model made it
  const documents = new Set(services.documents.list(namespace).map((d) => d.id))
  for (const stores of others) {
    const other = await heldChunks(vectors, stores, namespace)
    held.chunks += other.chunks
    for (const id of other.documents) documents.add(id)
  }
  held.documents = documents.size
  await exclusive.episodes(async (lease) => {
    lease.assertHeld()
    // Episodic vectors may exist without graph nodes (an ingest that failed half-way): they go whatever the counts say.
    // the derived Episodes' collections too (docs/derivation.md, "Derived Episodes")
    await Promise.all(['', DERIVED_COLLECTION_PREFIX].flatMap((part) =>
      EPISODIC_COLLECTIONS.map((c) => vectors.dropNamespace(`${config.collectionPrefix}${part}${c}`, namespace))))
    lease.assertHeld()
    await services.episodes.dropNamespace(namespace)
  })
  const library = services.documents.get(namespace)
  if (library) await dropDocuments(library, exclusive.documents)
  await exclusive.documents(async (lease) => {
    lease.assertHeld()
    await vectors.dropNamespace(`${config.collectionPrefix}${IMAGES_COLLECTION}`, namespace)
    for (const stores of others) {
      lease.assertHeld()
      await dropFromModel(vectors, stores, namespace)
    }
  })
  await exclusive.graph(async (lease) => {
    lease.assertHeld()
    await services.graph.dropNamespace(namespace)
    // its names' vectors (the entity-names write the drop asks for would remove them too, later)
    await vectors.dropNamespace(entityCollectionOf(config.collectionPrefix), namespace)
  })
  const { namespace: _, ...counts } = held
  return Object.values(counts).some((n) => n > 0) ? held : undefined
}
