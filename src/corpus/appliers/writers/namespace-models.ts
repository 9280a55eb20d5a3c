/**
 * The writers of the namespaces' model records (src/corpus/namespace-models.ts): the write path records the running
 * model after a write that embedded, and forgets it with a dropped namespace.
 */
import type { NamespaceModels } from '../../namespace-models.js'
import { MODEL_STATE, RECORD_ID } from '../../namespace-model-state.js'

const UNIT = new Float32Array([1])

/** Records this service's model as the namespace's (after a write that embedded); idempotent. */
export async function recordModel(models: NamespaceModels, namespace: string): Promise<void> {
  const { vectors, options, matching, written, unrecorded } = models[MODEL_STATE]
  if (matching.has(namespace) && written.has(namespace)) return
  await vectors.ensureCollection(options.records, 1)
  await vectors.write(options.records, namespace, {
    upsert: [{ id: RECORD_ID, vector: UNIT, payload: { doc_id: RECORD_ID, text: options.model, model: options.model } }]
  })
  matching.add(namespace)
  written.add(namespace)
  unrecorded.delete(namespace)
}

/** Forgets the namespace's model (it was dropped). */
export async function forgetModel(models: NamespaceModels, namespace: string): Promise<void> {
  const { vectors, options, matching, written, unrecorded } = models[MODEL_STATE]
  matching.delete(namespace)
  written.delete(namespace)
  unrecorded.delete(namespace)
  await vectors.dropNamespace(options.records, namespace)
}
