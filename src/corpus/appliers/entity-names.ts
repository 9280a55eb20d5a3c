/**
 * The entity-names applier: the background write that makes a namespace's entity collection hold a vector for exactly
 * the names and aliases its knowledge graph holds (docs/derivation.md, "Entities found by meaning"). A reconcile, so a
 * replayed or repeated run is safe: a text already held is kept, not embedded again; a text no entity names any more
 * (its document, graph or namespace deleted) goes. It runs under the `entities:` lock, which no foreground write takes.
 */
import type { Embedder } from '../../providers/embedder/port.js'
import type { VectorRecord, VectorStore } from '../../providers/vector-store/port.js'
import { planEntityNames, type EntityNameFailures, type EntityNamesResult, type EntityVectorPorts } from '../entity-vectors.js'
import type { Exclusive } from '../write-lock.js'

export interface EntityNamesPorts extends EntityVectorPorts {
  vectors: Pick<VectorStore, 'scroll' | 'ensureCollection' | 'write'>
  embedder: Pick<Embedder, 'embedPassages' | 'dimensions'>
}

/** Names embedded per call and written per store write: the pending count falls as each batch lands. */
const BATCH = 64

export async function applyEntityNames(
  ports: EntityNamesPorts, namespace: string,
  options: { collection: string; failures: EntityNameFailures; exclusive: Exclusive; signal?: AbortSignal }
): Promise<EntityNamesResult> {
  const { collection, failures } = options
  return options.exclusive(async (lease) => {
    const { wanted, held } = await planEntityNames(ports, collection, namespace)
    const stale = [...held.keys()].filter((id) => !wanted.has(id))
    const missing = [...wanted].filter(([id]) => !held.has(id))
    if (stale.length > 0 || missing.length > 0) await ports.vectors.ensureCollection(collection, ports.embedder.dimensions)
    if (stale.length > 0) {
      lease.assertHeld()
      await ports.vectors.write(collection, namespace, { deleteDocIds: stale })
    }
    let embedded = 0
    try {
      for (let at = 0; at < missing.length; at += BATCH) {
        options.signal?.throwIfAborted()
        const batch = missing.slice(at, at + BATCH)
        const vectors = await ports.embedder.embedPassages(batch.map(([, text]) => text))
        const upsert: VectorRecord[] = batch.map(([id, text], i) => ({ id, vector: vectors[i]!, payload: { doc_id: id, text } }))
        lease.assertHeld()
        await ports.vectors.write(collection, namespace, { upsert })
        embedded += batch.length
      }
    } catch (error) {
      failures.set(namespace, missing.slice(embedded).map(([, text]) => text), error instanceof Error ? error.message : String(error))
      throw error
    }
    failures.clear(namespace)
    return { embedded, removed: stale.length }
  })
}
