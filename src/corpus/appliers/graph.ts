/**
 * The graph applier: a graph change (`POST /ingest/graph`, `DELETE /entities/{id}`) written to the namespace's
 * knowledge graph under the `graph:` lock the write path hands it.
 */
import { UnknownEntitiesError, type KnowledgeGraphStore } from '../../providers/knowledge-graph/port.js'
import type { Change } from '../changes.js'
import { GraphIngestError, toGraphWrite, validateGraphBody, type GraphIngestBody, type GraphIngestResult } from '../graph.js'
import type { Exclusive } from '../write-lock.js'

type GraphChange = Extract<Change, { kind: 'graph' }>

/**
 * Upserts a body, all or nothing: throws GraphIngestError (400) listing every problem, unknown relation endpoints
 * included, before anything is written; store failures (e.g. BackendUnavailableError) pass through. Deletes entities
 * with their relations, answering the ids that were there.
 */
export function applyGraph(store: KnowledgeGraphStore, namespace: string, change: Extract<GraphChange, { op: 'upsert' }>, exclusive: Exclusive): Promise<GraphIngestResult>
export function applyGraph(store: KnowledgeGraphStore, namespace: string, change: Extract<GraphChange, { op: 'delete' }>, exclusive: Exclusive): Promise<{ deleted: string[] }>
export function applyGraph(store: KnowledgeGraphStore, namespace: string, change: GraphChange, exclusive: Exclusive): Promise<GraphIngestResult | { deleted: string[] }>
export function applyGraph(store: KnowledgeGraphStore, namespace: string, change: GraphChange, exclusive: Exclusive): Promise<GraphIngestResult | { deleted: string[] }> {
  if (change.op === 'upsert') {
    return exclusive(async (lease) => {
      lease.assertHeld()
      return upsertGraph(store, namespace, change.body)
    })
  }
  return exclusive(async (lease) => {
    const deleted: string[] = []
    for (const id of change.ids) {
      lease.assertHeld()
      if (await store.deleteEntity(namespace, id)) deleted.push(id)
    }
    return { deleted }
  })
}

async function upsertGraph(store: KnowledgeGraphStore, namespace: string, body: unknown): Promise<GraphIngestResult> {
  const problems = validateGraphBody(body)
  if (problems.length > 0) throw new GraphIngestError(problems)
  const write = toGraphWrite(body as GraphIngestBody)
  try {
    await store.upsert(namespace, write)
  } catch (error) {
    if (error instanceof UnknownEntitiesError) {
      throw new GraphIngestError(
        error.references.length > 0
          ? error.references.map((r) => `relations[${r.index}].${r.field}: unknown entity ${JSON.stringify(r.id)}`)
          : [error.message]
      )
    }
    throw error
  }
  return { entities: write.entities.length, relations: write.relations.length }
}
