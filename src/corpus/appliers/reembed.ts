/**
 * The re-embed applier (`npm run reembed`): a namespace whose vectors another local model made gets them made again
 * with the running model, from what the stores hold (no source is read or parsed again).
 */
import { decodeChunk, encodeChunk, type StoredChunkPayload } from '../../kernel/chunk-payload.js'
import { passageText } from '../../kernel/lexical-text.js'
import type { Embedder } from '../../providers/embedder/port.js'
import type { VectorRecord, VectorStore } from '../../providers/vector-store/port.js'
import type { DocumentLibraries } from '../libraries.js'
import { collectionsOf, otherModelStores, type ModelStoresConfig, type Reembedded } from '../model-stores.js'
import { dropFromModel } from './writers/model-drops.js'
import type { Exclusive } from '../write-lock.js'

export interface ReembedPorts {
  vectors: VectorStore
  embedder: Pick<Embedder, 'embedPassages' | 'dimensions' | 'model'>
  documents: DocumentLibraries
  config: ModelStoresConfig
}

/** Records embedded per call and written per vector-store write. */
const BATCH = 64

/**
 * Copies every record the other local models' collections hold of the namespace into the running model's matching
 * collection (same ids and payloads; chunks take the running model and analyzer in their `versions`), each with a
 * vector the running embedder makes from the text that model's writers embed (a chunk's passage text, else the
 * record's text); then rebuilds the namespace's catalog and lexical index from the new chunks and removes the old
 * model's records and lexical folders. Chunks under the `documents:` lock, episodic records under `episodes:`,
 * entity names under `entities:`. Safe to run again after a failure: what the old model still holds is copied again.
 */
export async function applyReembed(
  ports: ReembedPorts, namespace: string, exclusive: Record<'documents' | 'episodes' | 'entities', Exclusive>
): Promise<Reembedded> {
  const { vectors, embedder, documents, config } = ports
  const done: Reembedded = { from: [], chunks: 0, others: 0 }
  const target = collectionsOf(config)
  for (const stores of otherModelStores(config)) {
    const sources = collectionsOf(stores)
    const held = await Promise.all(sources.map((c) => vectors.count(c, namespace)))
    if (held.every((n) => n === 0)) continue
    done.from.push(stores.model)
    // chunks first: the catalog and lexical index are rebuilt from them
    await exclusive.documents(async (lease) => {
      const library = await documents.forWrite(namespace)
      const { analyzer, model } = library.versions
      const copied = await copyCollection(ports, sources[0]!, target[0]!, namespace, (id, payload) => {
        const chunk = decodeChunk(id, payload as StoredChunkPayload)
        const versions = chunk.versions ? { ...chunk.versions, analyzer, model } : undefined
        return { text: passageText(chunk), payload: encodeChunk({ ...chunk, ...(versions ? { versions } : {}) }) }
      }, () => lease.assertHeld())
      done.chunks += copied
      await library.refresh()
    })
    const last = sources.length - 1
    await exclusive.episodes(async (lease) => {
      for (let i = 1; i < last; i++) {
        done.others += await copyCollection(ports, sources[i]!, target[i]!, namespace, (_, payload) => ({ text: payload.text, payload }), () => lease.assertHeld())
      }
    })
    await exclusive.entities(async (lease) => {
      done.others += await copyCollection(ports, sources[last]!, target[last]!, namespace, (_, payload) => ({ text: payload.text, payload }), () => lease.assertHeld())
    })
    await exclusive.documents(async (lease) => {
      lease.assertHeld()
      await dropFromModel(vectors, stores, namespace)
    })
  }
  return done
}

/** Writes every record of `from` into `to` with a vector of the running model; answers how many. */
async function copyCollection(
  ports: ReembedPorts, from: string, to: string, namespace: string,
  made: (id: string, payload: VectorRecord['payload']) => { text: string; payload: VectorRecord['payload'] },
  assertHeld: () => void
): Promise<number> {
  const { vectors, embedder } = ports
  const records: Array<{ id: string; text: string; payload: VectorRecord['payload'] }> = []
  for await (const { id, payload } of vectors.scroll(from, namespace)) records.push({ id, ...made(id, payload) })
  if (records.length === 0) return 0
  await vectors.ensureCollection(to, embedder.dimensions)
  for (let at = 0; at < records.length; at += BATCH) {
    const batch = records.slice(at, at + BATCH)
    const embedded = await embedder.embedPassages(batch.map((r) => r.text))
    assertHeld()
    await vectors.write(to, namespace, { upsert: batch.map((r, i) => ({ id: r.id, vector: embedded[i]!, payload: r.payload })) })
  }
  return records.length
}
