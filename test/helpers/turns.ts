import { applyGraph } from '../../src/corpus/appliers/graph.js'
import type { GraphIngestResult } from '../../src/corpus/graph.js'
import { exclusiveOf, InProcessWriteLock, type Exclusive } from '../../src/corpus/write-lock.js'
import type { KnowledgeGraphStore } from '../../src/providers/knowledge-graph/port.js'

/**
 * A write lock of this process, as the write path hands it to a writer: the tests that drive a document library or
 * the Episode writer directly (not through `corpus.write`) take their turns through it.
 */
export function inTurns(name = 'documents:default'): Exclusive {
  return exclusiveOf(new InProcessWriteLock(), name)
}

/** A graph upsert through the graph applier, in its own turn: the tests that fill a knowledge graph store directly. */
export function ingestGraph(store: KnowledgeGraphStore, namespace: string, body: unknown): Promise<GraphIngestResult> {
  return applyGraph(store, namespace, { kind: 'graph', op: 'upsert', body }, inTurns(`graph:${namespace}`))
}

/** A graph delete through the graph applier: the ids that were there. */
export async function deleteGraphEntities(store: KnowledgeGraphStore, namespace: string, ids: string[]): Promise<string[]> {
  return (await applyGraph(store, namespace, { kind: 'graph', op: 'delete', ids }, inTurns(`graph:${namespace}`))).deleted
}
