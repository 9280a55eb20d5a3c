/**
 * Entity vectors (docs/derivation.md, "Entities found by meaning"): every name and alias of a namespace's knowledge
 * graph, imported and derived, has a vector in the namespace's entity collection, one per distinct normalised text.
 * The background applier (`appliers/entity-names.ts`) makes the collection hold exactly the texts the graph names;
 * this module plans that and answers how far it got (`EntityVectorStatus`), for `/metrics` and the index status.
 */
import { ENTITY_NAME_COLLECTION } from '../kernel/entity-names.js'
import { recordsOf, type EntityNameLedger } from './entity-name-ledger.js'
import type { KnowledgeGraphStore } from '../providers/knowledge-graph/port.js'
import type { VectorStore } from '../providers/vector-store/port.js'

/** How many distinct names and aliases have their vector (`done`), wait for it (`pending`), or failed at the last attempt. */
export interface EntityNameCounts {
  pending: number
  done: number
  /** Of the pending ones, those the last attempt failed to embed or write; `reason` says why. */
  failed: number
  reason?: string
}

/** What one run of the entity-names applier did. */
export interface EntityNamesResult {
  embedded: number
  removed: number
}

/** The read interface the index status and the metrics use. */
export interface EntityVectorStatus {
  /** A namespace's counts (all 0 for one without a graph). */
  namespace(namespace: string): Promise<EntityNameCounts>
  /** Per document: the names of the entities derived from it, counted as `namespace` counts them; a document without any is all 0. */
  documents(namespace: string, docIds: readonly string[]): Promise<Map<string, EntityNameCounts>>
}

export interface EntityVectorPorts {
  graph: Pick<KnowledgeGraphStore, 'names' | 'namesOf' | 'derivedOf'>
  vectors: Pick<VectorStore, 'scroll'>
}

/** What the last attempt of each namespace could not do: the texts still pending when it failed, and why. */
export class EntityNameFailures {
  readonly #failed = new Map<string, { texts: ReadonlySet<string>; reason: string }>()
  set(namespace: string, texts: Iterable<string>, reason: string): void {
    this.#failed.set(namespace, { texts: new Set(texts), reason })
  }
  clear(namespace: string): void {
    this.#failed.delete(namespace)
  }
  of(namespace: string): { texts: ReadonlySet<string>; reason: string } | undefined {
    return this.#failed.get(namespace)
  }
}

/** A namespace's entity collection as it should be (`wanted`) and as it is (`held`), both by record id. */
export interface EntityNamePlan {
  wanted: Map<string, string>
  held: Map<string, string>
}

export const entityCollectionOf = (collectionPrefix: string) => `${collectionPrefix}${ENTITY_NAME_COLLECTION}`

/** Every distinct name and alias text, by record id. */
function nameTexts(entities: ReadonlyArray<{ name: string; aliases: readonly string[] }>): Map<string, string> {
  const texts = new Map<string, string>()
  for (const e of entities) for (const [id, text] of recordsOf(e)) texts.set(id, text)
  return texts
}

/** The whole namespace's plan; with a ledger, the names read are kept in it for the next runs (`entity-name-ledger.ts`). */
export async function planEntityNames(ports: EntityVectorPorts, collection: string, namespace: string, ledger?: EntityNameLedger): Promise<EntityNamePlan> {
  const names = await ports.graph.names(namespace)
  const wanted = ledger ? ledger.rebuild(namespace, names) : nameTexts(names)
  const held = new Map<string, string>()
  for await (const record of ports.vectors.scroll(collection, namespace)) held.set(record.id, record.payload.text)
  return { wanted, held }
}

export function createEntityVectorStatus(ports: EntityVectorPorts, collectionPrefix: string, failures: EntityNameFailures): EntityVectorStatus {
  const collection = entityCollectionOf(collectionPrefix)
  const countsOf = (texts: ReadonlyMap<string, string>, held: ReadonlyMap<string, string>, namespace: string): EntityNameCounts => {
    const failed = failures.of(namespace)
    let pending = 0
    let failedCount = 0
    for (const [id, text] of texts) {
      if (held.has(id)) continue
      pending += 1
      if (failed?.texts.has(text)) failedCount += 1
    }
    return { pending, done: texts.size - pending, failed: failedCount, ...(failedCount > 0 ? { reason: failed!.reason } : {}) }
  }
  return {
    async namespace(namespace) {
      const { wanted, held } = await planEntityNames(ports, collection, namespace)
      return countsOf(wanted, held, namespace)
    },
    async documents(namespace, docIds) {
      const derived = await ports.graph.derivedOf(namespace, docIds)
      const byDocument = new Map<string, Array<{ name: string; aliases: readonly string[] }>>(docIds.map((id) => [id, []]))
      for (const entity of derived.entities) {
        for (const part of entity.derived_from ?? []) byDocument.get(part.doc_id)?.push(entity)
      }
      const texts = new Map([...byDocument].map(([id, entities]) => [id, nameTexts(entities)]))
      // only these documents' names are looked up (a name record's doc_id is its own id), so one document's status
      // costs what it names, not what the namespace holds
      const wanted = [...new Set([...texts.values()].flatMap((t) => [...t.keys()]))]
      const held = new Map<string, string>()
      if (wanted.length > 0) for await (const record of ports.vectors.scroll(collection, namespace, wanted)) held.set(record.id, record.payload.text)
      return new Map([...texts].map(([id, t]) => [id, countsOf(t, held, namespace)]))
    }
  }
}
