/**
 * The entity-names applier: the background write that makes a namespace's entity collection hold a vector for exactly
 * the names and aliases its knowledge graph holds (docs/derivation.md, "Entities found by meaning"). A reconcile, so a
 * replayed or repeated run is safe: a text already held is kept, not embedded again; a text no entity names any more
 * (its document, graph or namespace deleted) goes. It runs under the `entities:` lock, which no foreground write takes.
 */
import type { Embedder } from '../../providers/embedder/port.js'
import type { VectorRecord, VectorStore } from '../../providers/vector-store/port.js'
import { planEntityNames, type EntityNameFailures, type EntityNamesResult, type EntityVectorPorts } from '../entity-vectors.js'
import type { EntityNameLedger } from '../entity-name-ledger.js'
import type { Exclusive, Lease } from '../write-lock.js'

export interface EntityNamesPorts extends EntityVectorPorts {
  vectors: Pick<VectorStore, 'scroll' | 'ensureCollection' | 'write'>
  embedder: Pick<Embedder, 'embedPassages' | 'dimensions'>
}

/** Names embedded per call and written per store write: the pending count falls as each batch lands. */
const BATCH = 64

export interface EntityNamesOptions {
  collection: string
  failures: EntityNameFailures
  exclusive: Exclusive
  /** With it, a run reads the names of the entities the graph's writes touched since the last one only (`entity-name-ledger.ts`). */
  ledger?: EntityNameLedger
  signal?: AbortSignal
}

export async function applyEntityNames(ports: EntityNamesPorts, namespace: string, options: EntityNamesOptions): Promise<EntityNamesResult> {
  return options.exclusive(async (lease) => {
    try {
      return await reconcile(ports, namespace, lease, options)
    } catch (error) {
      // what the collection holds of the names this run read is not known: the next run reads the whole namespace
      options.ledger?.forget(namespace)
      throw error
    }
  })
}

async function reconcile(ports: EntityNamesPorts, namespace: string, lease: Lease, options: EntityNamesOptions): Promise<EntityNamesResult> {
  const { collection, failures } = options
  const { stale, missing } = await plan(ports, collection, namespace, options.ledger)
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
}

/**
 * The record ids to delete and the texts to embed: from the whole namespace, or, with a ledger that knows it, from the
 * entities the graph's writes touched since the last run (their records looked up in the collection alone).
 */
async function plan(ports: EntityNamesPorts, collection: string, namespace: string, ledger: EntityNameLedger | undefined): Promise<{ stale: string[]; missing: Array<[string, string]> }> {
  const touched = ledger ? ledger.take(namespace) : 'all'
  if (touched === 'all') {
    const { wanted, held } = await planEntityNames(ports, collection, namespace, ledger)
    return { stale: [...held.keys()].filter((id) => !wanted.has(id)), missing: [...wanted].filter(([id]) => !held.has(id)) }
  }
  if (touched.size === 0) return { stale: [], missing: [] }
  const changed = ledger!.update(namespace, touched, await ports.graph.namesOf(namespace, [...touched]))
  const held = new Set<string>()
  if (changed.size > 0) for await (const record of ports.vectors.scroll(collection, namespace, [...changed.keys()])) held.add(record.id)
  const stale: string[] = []
  const missing: Array<[string, string]> = []
  for (const [id, { text, wanted }] of changed) {
    if (wanted && !held.has(id)) missing.push([id, text])
    else if (!wanted && held.has(id)) stale.push(id)
  }
  return { stale, missing }
}
