/**
 * A namespace's hybrid corpus read straight from the shared stores, for the retrieves that come while this
 * replica reads its catalog of the namespace for the first time (about 10 s at 100k chunks). The vector leg and
 * the lexical leg on Qdrant rank without a catalog (ids and scores); the text of the chunks the answer shows is read
 * with the answer (`prepare`). A filter is resolved against the catalog, so a filtered retrieve still waits for
 * the read (docs/scale-out-state.md, "A namespace's first read").
 */
import type { LexicalIndex, LexicalIndexes } from '../providers/lexical-index/port.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import { decodeChunk, documentOfChunk, type ChunkRecord } from '../kernel/chunk-payload.js'

export interface StoreViewPorts {
  vectors: VectorStore
  lexical: LexicalIndexes
}

/** One request's view: the chunks it `prepare`d, nothing else held. */
export class StoreCorpus {
  readonly #chunks = new Map<string, ChunkRecord>()

  constructor(
    private readonly ports: StoreViewPorts,
    readonly collection: string,
    readonly namespace: string,
    /** The namespace's chunks when the view was opened: only whether it is empty is read. */
    readonly chunkCount: number
  ) {}

  get lexical(): LexicalIndex { return this.ports.lexical.get(this.namespace) }

  /** Reads the chunks among `ids` it does not hold yet, in one store call (by their documents). */
  async prepare(ids: readonly string[]): Promise<void> {
    const docIds = [...new Set(ids.filter((id) => !this.#chunks.has(id)).map(documentOfChunk))]
    if (docIds.length === 0) return
    for await (const { id, payload } of this.ports.vectors.scroll(this.collection, this.namespace, docIds)) {
      this.#chunks.set(id, decodeChunk(id, payload))
    }
  }

  chunk(id: string): ChunkRecord | undefined {
    return this.#chunks.get(id)
  }

  /** Never asked: a retrieve with a filter waits for the catalog instead of taking a view. */
  docIdsWithSourcePrefix(): string[] {
    throw new Error(`namespace "${this.namespace}": a source prefix is resolved by the catalog, which is still being read`)
  }
}

/**
 * The namespaces answered from the stores meanwhile: each is opened by the first retrieve that finds its catalog
 * unread (one count of its chunks) and closed once a read of it succeeds, after which the catalog answers. A read
 * that fails leaves the view open: the next retrieve starts another read, and is answered from the stores again
 * (never as an empty namespace because its catalog is missing).
 */
export class StoreViews {
  readonly #open = new Map<string, ViewEntry>()

  constructor(private readonly ports: StoreViewPorts, private readonly collection: string) {}

  /** Opens the namespace's view until `read` (a read of its catalog), or a later one, succeeds; resolves once the view can answer. */
  async open(namespace: string, read: Promise<unknown>): Promise<void> {
    let entry = this.#open.get(namespace)
    if (!entry) {
      const opened: ViewEntry = { count: this.ports.vectors.count(this.collection, namespace) }
      entry = opened
      this.#open.set(namespace, opened)
      opened.count.then((n) => { opened.chunks = n }, () => { if (this.#open.get(namespace) === opened) this.#open.delete(namespace) })
    }
    const current = entry
    // any read that succeeds has read the catalog; one that fails closes nothing
    read.then(() => { if (this.#open.get(namespace) === current) this.#open.delete(namespace) }, () => {})
    await current.count
  }

  /** A fresh view of the namespace while it is open and counted; undefined otherwise. */
  view(namespace: string): StoreCorpus | undefined {
    const chunks = this.#open.get(namespace)?.chunks
    return chunks === undefined ? undefined : new StoreCorpus(this.ports, this.collection, namespace, chunks)
  }
}

/** An open view: the namespace's chunk count, and the count once known. */
interface ViewEntry { count: Promise<number>; chunks?: number }
