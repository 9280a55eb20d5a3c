import type { Embedder } from '../../../providers/embedder/port.js'
import type { VectorStore } from '../../../providers/vector-store/port.js'

/** The stores an Episode vector delete uses (the vector store, and the embedder's dimensions to ensure a collection). */
type VectorPorts = { vectors: VectorStore; embedder: Embedder }

export async function removeUnusedVectors(
  ports: VectorPorts, prefix: string, namespace: string, entityIds: readonly string[], labels: readonly string[]
): Promise<void> {
  if (entityIds.length > 0) await deleteVectorDocs(ports, `${prefix}Entity_name`, namespace, entityIds)
  if (labels.length > 0) await deleteVectorDocs(ports, `${prefix}RelationType_relationship_name`, namespace, labels)
}

/** Deletes by doc id; the store refuses writes to a missing collection, so it is ensured first. */
export async function deleteVectorDocs(ports: VectorPorts, collection: string, namespace: string, docIds: readonly string[]): Promise<void> {
  await ports.vectors.ensureCollection(collection, ports.embedder.dimensions)
  await ports.vectors.write(collection, namespace, { deleteDocIds: docIds })
}
