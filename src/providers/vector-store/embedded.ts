import { endianness } from 'node:os'
import { join } from 'node:path'
import { access, constants, mkdir, open, readFile, rename, rm, rmdir, type FileHandle } from 'node:fs/promises'
import { crc32 } from 'node:zlib'
import { BackendUnavailableError, backendName, UnexpectedResponseError, probeHealth, type BackendHealth } from '../errors.js'
import { checkNamespace, DEFAULT_NAMESPACE, namespaceDir, storedNamespaces } from '../namespace.js'
import { compileFilter } from './filter.js'
import type { VectorFilter, VectorHit, VectorPayload, VectorRecord, VectorStore, VectorWrite } from './port.js'

export interface EmbeddedVectorStoreOptions {
  /** Folder holding one `<collection>.snap` and one `<collection>.log` per collection; created when needed. */
  dir: string
  /**
   * The log is compacted into a new snapshot once it is larger than the snapshot and than this many bytes.
   * Default 1 MiB (1_048_576); 0 compacts as soon as the log outgrows the snapshot.
   */
  compactionFloorBytes?: number
}

const BACKEND = backendName('vector-store', 'memory')
const SNAPSHOT_MAGIC = 0x31535652 // 'RVS1' read as a little-endian u32
const SNAPSHOT_HEADER_BYTES = 28
const RECORD_HEADER_BYTES = 8
// Small, since every namespace's partition starts with it: 16 rows of 512 floats fit one WebAssembly page.
const INITIAL_ROWS = 16
const LITTLE_ENDIAN_HOST = endianness() === 'LE'
const WASM_PAGE_BYTES = 65_536

// The compiler's lib has no WebAssembly declarations (no DOM lib); these are the few members used here.
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
type WasmModule = object
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number }) => WasmMemory
      Module: new (bytes: Uint8Array) => WasmModule
      Instance: new (module: WasmModule, imports: object) => { exports: unknown }
    }
  }
).WebAssembly

/** Bytes of WebAssembly pages for a query row, `rows` matrix rows and `rows` scores. */
function pagesFor(stride: number, rows: number): number {
  return Math.ceil((stride * 4 * (1 + rows) + rows * 4) / WASM_PAGE_BYTES)
}

interface DotKernel {
  /** scores[r] = dot(matrix row r, query) for r < rows; pointers are byte offsets, `stride` a multiple of 8. */
  dots(matrixAt: number, queryAt: number, rows: number, stride: number, scoresAt: number): void
}

let dotModule: WasmModule | undefined

/**
 * The search kernel, hand-assembled WebAssembly SIMD: two f32x4 accumulators per row. Plain JS does
 * 10k x 512 in ~20 ms on this machine; this does it in ~1 ms (bench/results/vector-store.json).
 *
 * (func (export "dots") (param $mat i32) (param $q i32) (param $n i32) (param $d i32) (param $out i32)
 *   for row < n: acc0, acc1 = 0; for j < d*4 step 32: acc0 += mat[p+j..] * q[j..]; acc1 += mat[p+j+16..] * q[j+16..]
 *   out[row] = lanes of (acc0 + acc1) summed 0+1+2+3; p += d*4)
 */
function instantiateDotKernel(memory: WasmMemory): DotKernel {
  if (!dotModule) {
    const zero16 = Array(16).fill('00').join(' ')
    const body = hexBytes(`
      02 04 7f 02 7b
      20 03 41 02 74 21 08
      20 00 21 07
      02 40 03 40
        20 05 20 02 4f 0d 01
        fd 0c ${zero16} 21 09 fd 0c ${zero16} 21 0a
        41 00 21 06
        02 40 03 40
          20 06 20 08 4f 0d 01
          20 09 20 07 20 06 6a fd 00 04 00 20 01 20 06 6a fd 00 04 00 fd e6 01 fd e4 01 21 09
          20 0a 20 07 20 06 6a fd 00 04 10 20 01 20 06 6a fd 00 04 10 fd e6 01 fd e4 01 21 0a
          20 06 41 20 6a 21 06
          0c 00
        0b 0b
        20 04 20 05 41 02 74 6a
        20 09 20 0a fd e4 01 21 09
        20 09 fd 1f 00 20 09 fd 1f 01 92 20 09 fd 1f 02 92 20 09 fd 1f 03 92
        38 02 00
        20 07 20 08 6a 21 07
        20 05 41 01 6a 21 05
        0c 00
      0b 0b 0b`)
    const section = (id: number, bytes: number[]): number[] => [id, ...uleb128(bytes.length), ...bytes]
    dotModule = new wasm.Module(
      new Uint8Array([
        ...hexBytes('00 61 73 6d 01 00 00 00'),
        ...section(1, hexBytes('01 60 05 7f 7f 7f 7f 7f 00')), // type: (i32 x5) -> ()
        ...section(2, hexBytes('01 03 65 6e 76 06 6d 65 6d 6f 72 79 02 00 00')), // import env.memory
        ...section(3, [1, 0]),
        ...section(7, hexBytes('01 04 64 6f 74 73 00 00')), // export "dots"
        ...section(10, [1, ...uleb128(body.length), ...body])
      ])
    )
  }
  return new wasm.Instance(dotModule, { env: { memory } }).exports as unknown as DotKernel
}

function hexBytes(text: string): number[] {
  return text.trim().split(/\s+/).map((h) => Number.parseInt(h, 16))
}

function uleb128(value: number): number[] {
  const out: number[] = []
  let n = value
  do {
    let byte = n & 0x7f
    n >>>= 7
    if (n !== 0) byte |= 0x80
    out.push(byte)
  } while (n !== 0)
  return out
}

/** One collection held in memory: a row-major matrix of unit vectors in WebAssembly memory, grown by doubling. */
class Collection {
  /** Floats per row: `dims` rounded up to 8 so the kernel's two 4-lane accumulators need no tail loop. */
  readonly stride: number
  capacity: number
  readonly memory: WasmMemory
  private readonly kernel: DotKernel
  /** Layout of `memory`: the query row, then `capacity` matrix rows, then one f32 score per row. */
  query!: Float32Array
  matrix!: Float32Array
  scores!: Float32Array
  readonly ids: string[] = []
  readonly payloads: VectorPayload[] = []
  readonly rowOf = new Map<string, number>()
  readonly idsOfDoc = new Map<string, Set<string>>()
  /** Sequence number of the last write applied (from the snapshot or the log). */
  seq = 0
  snapshotBytes = 0
  logBytes = 0
  log: FileHandle | undefined
  /** Set when a failed append could not be rolled back: the log may hold garbage, so no more writes. */
  broken: Error | undefined

  constructor(
    readonly dims: number,
    rows: number
  ) {
    this.stride = Math.ceil(dims / 8) * 8
    this.capacity = Math.max(rows, INITIAL_ROWS)
    this.memory = new wasm.Memory({ initial: pagesFor(this.stride, this.capacity) })
    this.kernel = instantiateDotKernel(this.memory)
    this.mapViews()
  }

  private mapViews(): void {
    const rowBytes = this.stride * 4
    this.query = new Float32Array(this.memory.buffer, 0, this.stride)
    this.matrix = new Float32Array(this.memory.buffer, rowBytes, this.capacity * this.stride)
    this.scores = new Float32Array(this.memory.buffer, rowBytes * (1 + this.capacity), this.capacity)
  }

  /** Grows (by doubling) until `rows` rows fit; throws RangeError when WebAssembly memory cannot grow. */
  reserve(rows: number): void {
    let capacity = this.capacity
    while (capacity < rows) capacity *= 2
    if (capacity === this.capacity) return
    const pages = pagesFor(this.stride, capacity)
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES)
    this.capacity = capacity
    // growing detaches the old buffer; the rows keep their offsets, the score area moves behind them
    this.mapViews()
  }

  get size(): number {
    return this.ids.length
  }

  deleteDoc(docId: string): void {
    const ids = this.idsOfDoc.get(docId)
    if (!ids) return
    for (const id of [...ids]) this.deleteId(id)
  }

  /** Swap-remove: the last row moves into the hole so the matrix stays contiguous. */
  deleteId(id: string): void {
    const row = this.rowOf.get(id)
    if (row === undefined) return
    this.unlinkDoc(id, this.payloads[row]!.doc_id)
    const last = this.ids.length - 1
    if (row !== last) {
      const d = this.stride
      this.matrix.copyWithin(row * d, last * d, last * d + d)
      const moved = this.ids[last]!
      this.ids[row] = moved
      this.payloads[row] = this.payloads[last]!
      this.rowOf.set(moved, row)
    }
    this.ids.pop()
    this.payloads.pop()
    this.rowOf.delete(id)
  }

  /** Inserts or replaces `id`; `source[offset .. offset + dims)` must already be unit norm. */
  upsert(id: string, payload: VectorPayload, source: Float32Array, offset: number): void {
    let row = this.rowOf.get(id)
    if (row === undefined) {
      row = this.ids.length
      if (row >= this.capacity) this.reserve(row + 1)
      this.ids.push(id)
      this.payloads.push(payload)
      this.rowOf.set(id, row)
    } else {
      this.unlinkDoc(id, this.payloads[row]!.doc_id)
      this.payloads[row] = payload
    }
    this.matrix.set(source.subarray(offset, offset + this.dims), row * this.stride)
    let ids = this.idsOfDoc.get(payload.doc_id)
    if (!ids) this.idsOfDoc.set(payload.doc_id, (ids = new Set()))
    ids.add(id)
  }

  /** The rows `filter` keeps: from the documents' own rows when it names documents only, else by a pass over the payloads. */
  private rowsKept(filter: VectorFilter): Int32Array {
    const out: number[] = []
    if (filter.doc_ids && (filter.metadata ?? []).length === 0) {
      for (const docId of new Set(filter.doc_ids)) for (const id of this.idsOfDoc.get(docId) ?? []) out.push(this.rowOf.get(id)!)
    } else {
      const keep = compileFilter(filter)
      for (let row = 0; row < this.payloads.length; row++) if (keep(this.payloads[row]!)) out.push(row)
    }
    return Int32Array.from(out)
  }

  apply(write: DecodedWrite): void {
    for (const docId of write.deleteDocIds) this.deleteDoc(docId)
    write.records.forEach(([id, payload], i) => this.upsert(id, payload, write.vectors, i * this.dims))
    this.seq = write.seq
  }

  private unlinkDoc(id: string, docId: string): void {
    const ids = this.idsOfDoc.get(docId)
    if (!ids) return
    ids.delete(id)
    if (ids.size === 0) this.idsOfDoc.delete(docId)
  }

  /**
   * Exact top-k by dot product (= cosine for unit rows), via a min-heap whose root is the worst kept hit.
   * With a filter, only the rows it keeps enter the heap: when they are few, only their dot products are
   * computed (one kernel call per row); otherwise the whole matrix is, as without a filter.
   */
  search(query: Float32Array, limit: number, filter?: VectorFilter): VectorHit[] {
    const rows = filter ? this.rowsKept(filter) : undefined
    const n = rows ? rows.length : this.ids.length
    const k = Math.min(Math.floor(limit), n)
    if (!(k >= 1)) return [] // also NaN
    this.query.set(query)
    const rowBytes = this.stride * 4
    const scoresAt = rowBytes * (1 + this.capacity)
    if (rows && rows.length * 4 < this.ids.length) {
      for (const row of rows) this.kernel.dots(rowBytes * (1 + row), 0, 1, this.stride, scoresAt + row * 4)
    } else {
      this.kernel.dots(rowBytes, 0, this.ids.length, this.stride, scoresAt)
    }
    const scores = this.scores
    const ids = this.ids
    const heapScore = new Float64Array(k)
    const heapRow = new Int32Array(k)
    let size = 0
    // `a` is worse than `b` when it scores lower, or equal and its id sorts later.
    const worse = (sa: number, ra: number, sb: number, rb: number): boolean =>
      sa < sb || (sa === sb && ids[ra]! > ids[rb]!)
    const swap = (i: number, j: number): void => {
      const s = heapScore[i]!
      const r = heapRow[i]!
      heapScore[i] = heapScore[j]!
      heapRow[i] = heapRow[j]!
      heapScore[j] = s
      heapRow[j] = r
    }
    for (let at = 0; at < n; at++) {
      const row = rows ? rows[at]! : at
      const score = scores[row]!
      if (size < k) {
        let i = size++
        heapScore[i] = score
        heapRow[i] = row
        while (i > 0) {
          const p = (i - 1) >> 1
          if (!worse(heapScore[i]!, heapRow[i]!, heapScore[p]!, heapRow[p]!)) break
          swap(i, p)
          i = p
        }
      } else if (worse(heapScore[0]!, heapRow[0]!, score, row)) {
        heapScore[0] = score
        heapRow[0] = row
        let i = 0
        for (;;) {
          const l = 2 * i + 1
          if (l >= size) break
          const r = l + 1
          const w = r < size && worse(heapScore[r]!, heapRow[r]!, heapScore[l]!, heapRow[l]!) ? r : l
          if (!worse(heapScore[w]!, heapRow[w]!, heapScore[i]!, heapRow[i]!)) break
          swap(i, w)
          i = w
        }
      }
    }
    const order = Array.from({ length: size }, (_, i) => i)
    order.sort((a, b) => (worse(heapScore[a]!, heapRow[a]!, heapScore[b]!, heapRow[b]!) ? 1 : -1))
    return order.map((i) => {
      const row = heapRow[i]!
      return {
        id: ids[row]!,
        // float32 rounding can push a unit-vector dot product a hair past ±1
        score: Math.max(-1, Math.min(1, heapScore[i]!)),
        payload: structuredClone(this.payloads[row]!)
      }
    })
  }
}

interface DecodedWrite {
  seq: number
  deleteDocIds: string[]
  records: [string, VectorPayload][]
  /** `records.length * dims` floats, unit-norm rows in record order. */
  vectors: Float32Array
}

/** Per partition (collection, namespace): a queue that serialises changes, and the partition once loaded (`null`: absent). */
interface Slot {
  chain: Promise<unknown>
  state: Collection | null | undefined
}

/**
 * Exact cosine search over unit vectors, one contiguous matrix per partition, persisted under `dir`.
 *
 * Partitions: each (collection, namespace) is a matrix of its own with its own snapshot and log, so a search
 * in one namespace scans only that namespace's vectors. The `default` namespace keeps the file names a
 * store without namespaces wrote (`dir/<collection>.snap` and `.log`), so such a folder opens with
 * everything in `default`, untouched; another namespace lives under `dir/namespaces/<namespace>/`. The
 * default partition's snapshot also marks that the collection exists, and holds its dimension.
 *
 * Durability: every `write` is one length-prefixed, CRC-32-checked record appended to the partition's log and
 * fsynced before the promise resolves. Opening replays the log over the snapshot; a torn or corrupt record
 * ends the replay and is cut off, so a write is either wholly present or wholly absent after a crash. When
 * the log outgrows the snapshot, both are compacted into a new snapshot (temp file, fsync, rename).
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly backend = 'memory' as const
  private readonly dir: string
  private readonly compactionFloorBytes: number
  private readonly slots = new Map<string, Slot>()
  private closed = false
  private lastCompactionError: unknown

  constructor(options: EmbeddedVectorStoreOptions) {
    this.dir = options.dir
    this.compactionFloorBytes = options.compactionFloorBytes ?? 1_048_576
  }

  async ensureCollection(collection: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`)
    }
    await this.exclusive(collection, DEFAULT_NAMESPACE, async (slot) => {
      const existing = await this.load(collection, DEFAULT_NAMESPACE, slot)
      if (existing) {
        if (existing.dims !== dimensions) {
          throw new RangeError(
            `collection ${collection} has ${existing.dims} dimensions, not ${dimensions}`
          )
        }
        return
      }
      slot.state = await this.create(collection, DEFAULT_NAMESPACE, dimensions)
    })
  }

  async write(collection: string, namespace: string, change: VectorWrite): Promise<void> {
    checkNamespace(namespace)
    await this.exclusive(collection, namespace, async (slot) => {
      let c = await this.load(collection, namespace, slot)
      // the default partition marks the collection and holds its dimension
      const marker = c ?? (namespace === DEFAULT_NAMESPACE ? null : await this.loaded(collection, DEFAULT_NAMESPACE))
      if (!marker) throw new Error(`vector collection ${collection} does not exist; call ensureCollection first`)
      if (c?.broken) throw new BackendUnavailableError(BACKEND, c.broken.message, { cause: c.broken })
      const decoded = prepareWrite(marker.dims, (c?.seq ?? 0) + 1, change)
      if (decoded.records.length === 0 && (decoded.deleteDocIds.length === 0 || !c)) return
      // a namespace's partition is made by its first upsert, never by a read or a delete
      c ??= slot.state = await this.create(collection, namespace, marker.dims)
      // room first, so that applying the write after it is durable cannot fail half-way
      try {
        c.reserve(c.size + decoded.records.length)
      } catch (error) {
        throw new BackendUnavailableError(BACKEND, `no memory for ${c.size + decoded.records.length} vectors`, { cause: error })
      }
      const record = encodeRecord(decoded, c.dims)
      const log = c.log!
      const where = partitionName(collection, namespace)
      try {
        await log.appendFile(record)
        await log.datasync()
      } catch (error) {
        try {
          await log.truncate(c.logBytes)
          await log.datasync()
        } catch (rollbackError) {
          c.broken = new Error(`log of ${where} could not be rolled back after a failed append`, {
            cause: rollbackError
          })
        }
        throw new BackendUnavailableError(BACKEND, `append to the log of ${where} failed`, { cause: error })
      }
      c.logBytes += record.length
      c.apply(decoded)
      if (c.logBytes > Math.max(c.snapshotBytes, this.compactionFloorBytes)) {
        const written = c
        // queued behind this write but not awaited by it: the write is already durable in the log
        void this.exclusive(collection, namespace, async (s) => {
          if (s.state === written) await this.compact(collection, namespace, written)
        }).catch((e: unknown) => {
          this.lastCompactionError = e
        })
      }
    })
  }

  async search(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter): Promise<VectorHit[]> {
    const c = await this.loaded(collection, checkNamespace(namespace))
    if (!c) return []
    if (vector.length !== c.dims) {
      throw new RangeError(`query has ${vector.length} dimensions, collection ${collection} has ${c.dims}`)
    }
    return c.search(toUnit(vector, 'query'), limit, filter)
  }

  async *scroll(collection: string, namespace: string): AsyncIterable<{ id: string; payload: VectorPayload }> {
    const c = await this.loaded(collection, checkNamespace(namespace))
    if (!c) return
    const rows = c.ids.map((id, row) => ({ id, payload: c.payloads[row]! }))
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    for (const { id, payload } of rows) yield { id, payload: structuredClone(payload) }
  }

  async count(collection: string, namespace: string): Promise<number> {
    return (await this.loaded(collection, checkNamespace(namespace)))?.size ?? 0
  }

  async namespaces(collection: string): Promise<string[]> {
    const out: string[] = []
    for (const namespace of await this.partitionsOf(collection)) {
      if (((await this.loaded(collection, namespace))?.size ?? 0) > 0) out.push(namespace)
    }
    return out
  }

  async dropNamespace(collection: string, namespace: string): Promise<void> {
    checkNamespace(namespace)
    await this.exclusive(collection, namespace, async (slot) => {
      const c = await this.load(collection, namespace, slot)
      if (!c) return
      if (namespace === DEFAULT_NAMESPACE) {
        // the default partition's snapshot marks the collection: it becomes empty, and stays
        await this.io(async () => {
          await c.log?.close()
          slot.state = null
          slot.state = await this.create(collection, namespace, c.dims)
        })
        return
      }
      slot.state = null
      await this.removeFiles(collection, namespace, c)
    })
  }

  async dropCollection(collection: string): Promise<void> {
    // other namespaces first: the default partition marks the collection, so it goes last
    const namespaces = (await this.partitionsOf(collection)).filter((ns) => ns !== DEFAULT_NAMESPACE)
    for (const namespace of [...namespaces, DEFAULT_NAMESPACE]) {
      await this.exclusive(collection, namespace, async (slot) => {
        const c = await this.load(collection, namespace, slot)
        slot.state = null
        await this.removeFiles(collection, namespace, c)
      })
    }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      if (this.closed) throw new Error('store is closed')
      await mkdir(this.dir, { recursive: true })
      await access(this.dir, constants.R_OK | constants.W_OK)
      return this.lastCompactionError ? `last compaction failed: ${String(this.lastCompactionError)}` : undefined
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const slot of this.slots.values()) {
      // a write may queue a compaction behind itself, so wait until the queue stops moving
      let chain: Promise<unknown> | undefined
      while (chain !== slot.chain) {
        chain = slot.chain
        await chain.catch(() => undefined)
      }
      await slot.state?.log?.close()
    }
  }

  /** The namespaces with a partition of `collection`, on disk or in memory (empty ones included), ascending. */
  private async partitionsOf(collection: string): Promise<string[]> {
    const found = new Set<string>()
    for (const [key, slot] of this.slots) {
      const [namespace, name] = splitKey(key)
      if (name === collection && slot.state) found.add(namespace)
    }
    const stem = fileStem(collection)
    await this.io(async () => {
      if (await exists(join(this.dir, `${stem}.snap`))) found.add(DEFAULT_NAMESPACE)
      for (const namespace of await storedNamespaces(this.dir)) {
        if (await exists(join(namespaceDir(this.dir, namespace), `${stem}.snap`))) found.add(namespace)
      }
    })
    return [...found].sort()
  }

  /** A new, empty partition on disk: its snapshot, then an empty log. */
  private async create(collection: string, namespace: string, dimensions: number): Promise<Collection> {
    const created = new Collection(dimensions, 0)
    await this.io(async () => {
      const dir = this.partitionDir(namespace)
      await mkdir(dir, { recursive: true })
      // a log left by a crash during an earlier drop must not be replayed into the new partition
      await rm(this.logPath(collection, namespace), { force: true })
      created.snapshotBytes = await this.writeSnapshot(collection, namespace, created)
      created.log = await open(this.logPath(collection, namespace), 'a')
      await syncDir(dir)
    })
    return created
  }

  private async removeFiles(collection: string, namespace: string, c: Collection | null): Promise<void> {
    await this.io(async () => {
      await c?.log?.close()
      // the snapshot marks existence, so it goes first; a log without a snapshot is an orphan
      await rm(this.snapshotPath(collection, namespace), { force: true })
      await rm(this.logPath(collection, namespace), { force: true })
      if (namespace !== DEFAULT_NAMESPACE) {
        // the namespace's folder goes with its last partition
        await rmdir(this.partitionDir(namespace)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT' && e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e
        })
      }
    })
  }

  private slot(collection: string, namespace: string): Slot {
    if (this.closed) throw new BackendUnavailableError(BACKEND, 'vector store is closed')
    const key = slotKey(collection, namespace)
    let slot = this.slots.get(key)
    if (!slot) this.slots.set(key, (slot = { chain: Promise.resolve(), state: undefined }))
    return slot
  }

  /** Runs `task` after every earlier change to the partition has settled. */
  private exclusive<T>(collection: string, namespace: string, task: (slot: Slot) => Promise<T>): Promise<T> {
    const slot = this.slot(collection, namespace)
    const result = slot.chain.then(() => task(slot))
    slot.chain = result.catch(() => undefined)
    return result
  }

  private async loaded(collection: string, namespace: string): Promise<Collection | null> {
    const slot = this.slot(collection, namespace)
    if (slot.state !== undefined) return slot.state
    return this.exclusive(collection, namespace, (s) => this.load(collection, namespace, s))
  }

  private async load(collection: string, namespace: string, slot: Slot): Promise<Collection | null> {
    if (slot.state !== undefined) return slot.state
    slot.state = await this.io(() => this.read(collection, namespace))
    return slot.state
  }

  private async read(collection: string, namespace: string): Promise<Collection | null> {
    const snapshot = await readFile(this.snapshotPath(collection, namespace)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined
      throw e
    })
    if (!snapshot) return null
    const c = decodeSnapshot(snapshot, partitionName(collection, namespace))
    c.snapshotBytes = snapshot.length
    const logPath = this.logPath(collection, namespace)
    const log = await readFile(logPath).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return Buffer.alloc(0)
      throw e
    })
    let offset = 0
    for (;;) {
      const next = decodeRecordAt(log, offset, c.dims)
      if (!next) break
      // records up to the snapshot's sequence number survive a crash between snapshot rename and log truncation
      if (next.write.seq > c.seq) c.apply(next.write)
      offset = next.end
    }
    c.log = await open(logPath, 'a')
    if (offset < log.length) {
      // a torn tail: the write it held never resolved, so it is dropped
      await c.log.truncate(offset)
      await c.log.datasync()
    }
    c.logBytes = offset
    return c
  }

  private async compact(collection: string, namespace: string, c: Collection): Promise<void> {
    await this.io(async () => {
      c.snapshotBytes = await this.writeSnapshot(collection, namespace, c)
      await c.log!.truncate(0)
      await c.log!.datasync()
      c.logBytes = 0
    })
  }

  /** Writes the snapshot to a temp file, fsyncs it, renames it into place and fsyncs the folder. */
  private async writeSnapshot(collection: string, namespace: string, c: Collection): Promise<number> {
    const bytes = encodeSnapshot(c)
    const target = this.snapshotPath(collection, namespace)
    const temp = `${target}.tmp`
    const fh = await open(temp, 'w')
    try {
      await fh.writeFile(bytes)
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(temp, target)
    await syncDir(this.partitionDir(namespace))
    return bytes.length
  }

  /** Maps file-system failures onto the provider errors; our own errors pass through. */
  private async io<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task()
    } catch (error) {
      if (error instanceof UnexpectedResponseError || error instanceof BackendUnavailableError) throw error
      throw new BackendUnavailableError(BACKEND, `vector store file operation failed: ${String(error)}`, {
        cause: error
      })
    }
  }

  private partitionDir(namespace: string): string {
    return namespaceDir(this.dir, namespace)
  }

  private snapshotPath(collection: string, namespace: string): string {
    return join(this.partitionDir(namespace), `${fileStem(collection)}.snap`)
  }

  private logPath(collection: string, namespace: string): string {
    return join(this.partitionDir(namespace), `${fileStem(collection)}.log`)
  }
}

const slotKey = (collection: string, namespace: string): string => `${namespace}\u0000${collection}`

function splitKey(key: string): [namespace: string, collection: string] {
  const at = key.indexOf('\u0000')
  return [key.slice(0, at), key.slice(at + 1)]
}

/** How errors name a partition: the collection, with its namespace unless it is `default`. */
const partitionName = (collection: string, namespace: string): string =>
  namespace === DEFAULT_NAMESPACE ? collection : `${collection} (namespace ${namespace})`

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return false
    throw e
  })
}

/** A collection name as a file name: percent-encoded, dots included, so `..` or `/` cannot escape `dir`. */
function fileStem(collection: string): string {
  if (collection.length === 0) throw new RangeError('collection name must not be empty')
  return encodeURIComponent(collection).replace(/[.!'()*~]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/** A copy of `vector` scaled to unit length; a zero vector stays zero (it scores 0 against everything). */
function toUnit(vector: Float32Array, what: string): Float32Array {
  let norm = 0
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!
    if (!Number.isFinite(x)) throw new RangeError(`${what} vector has a non-finite component at ${i}`)
    norm += x * x
  }
  const out = new Float32Array(vector.length)
  if (norm === 0) return out
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale
  return out
}

/** Validates a write and turns it into its log form; throws before anything is written. */
function prepareWrite(dims: number, seq: number, change: VectorWrite): DecodedWrite {
  const upserts = change.upsert ?? []
  const vectors = new Float32Array(upserts.length * dims)
  const records: [string, VectorPayload][] = []
  upserts.forEach((record: VectorRecord, i) => {
    if (typeof record.id !== 'string' || record.id.length === 0) throw new RangeError('record id must be a non-empty string')
    if (record.vector.length !== dims) {
      throw new RangeError(`record ${record.id} has ${record.vector.length} dimensions, expected ${dims}`)
    }
    if (typeof record.payload?.doc_id !== 'string') throw new RangeError(`record ${record.id} has no payload.doc_id`)
    // as on Qdrant, where the payload carries the record id under `id` and its namespace under `namespace`
    if ('id' in record.payload && record.payload.id !== record.id) {
      throw new RangeError(`record ${record.id}: payload key "id" is reserved for the record id`)
    }
    if ('namespace' in record.payload) throw new RangeError(`record ${record.id}: payload key "namespace" is reserved`)
    vectors.set(toUnit(record.vector, `record ${record.id}`), i * dims)
    // a JSON round trip both checks the payload is serialisable and detaches it from the caller's object
    records.push([record.id, JSON.parse(JSON.stringify(record.payload)) as VectorPayload])
  })
  return { seq, deleteDocIds: [...(change.deleteDocIds ?? [])], records, vectors }
}

// Log record: u32 body length, u32 CRC-32 of the body, body. Body: u32 JSON length, JSON
// {seq, del, up: [[id, payload]…]}, zero padding to 4 bytes, float32 LE vectors, zero padding to 4 bytes.
function encodeRecord(write: DecodedWrite, dims: number): Buffer {
  const json = Buffer.from(JSON.stringify({ seq: write.seq, del: write.deleteDocIds, up: write.records }))
  const floatsAt = align4(4 + json.length)
  const bodyLength = align4(floatsAt + write.records.length * dims * 4)
  const out = Buffer.alloc(RECORD_HEADER_BYTES + bodyLength)
  const body = out.subarray(RECORD_HEADER_BYTES)
  body.writeUInt32LE(json.length, 0)
  json.copy(body, 4)
  writeFloats(body, floatsAt, write.vectors)
  out.writeUInt32LE(bodyLength, 0)
  out.writeUInt32LE(crc32(body), 4)
  return out
}

/** The record at `offset`, or undefined when the log ends there or the record is torn or corrupt. */
function decodeRecordAt(log: Buffer, offset: number, dims: number): { write: DecodedWrite; end: number } | undefined {
  if (offset + RECORD_HEADER_BYTES > log.length) return undefined
  const bodyLength = log.readUInt32LE(offset)
  const end = offset + RECORD_HEADER_BYTES + bodyLength
  if (bodyLength < 4 || end > log.length) return undefined
  const body = log.subarray(offset + RECORD_HEADER_BYTES, end)
  if (crc32(body) !== log.readUInt32LE(offset + 4)) return undefined
  try {
    const jsonLength = body.readUInt32LE(0)
    const parsed = JSON.parse(body.toString('utf8', 4, 4 + jsonLength)) as {
      seq: number
      del: string[]
      up: [string, VectorPayload][]
    }
    const floatsAt = align4(4 + jsonLength)
    const count = parsed.up.length * dims
    if (floatsAt + count * 4 > body.length) return undefined
    const vectors = readFloats(body, floatsAt, count)
    return { write: { seq: parsed.seq, deleteDocIds: parsed.del, records: parsed.up, vectors }, end }
  } catch {
    return undefined
  }
}

// Snapshot: u32 magic, u32 CRC-32 of everything after byte 8, u32 dims, u32 count, f64 seq, u32 JSON length,
// JSON [[id, payload]…] in row order, zero padding to 4 bytes, count × dims float32 LE.
function encodeSnapshot(c: Collection): Buffer {
  const json = Buffer.from(JSON.stringify(c.ids.map((id, row) => [id, c.payloads[row]])))
  const floatsAt = align4(SNAPSHOT_HEADER_BYTES + json.length)
  const out = Buffer.alloc(floatsAt + c.size * c.dims * 4)
  out.writeUInt32LE(SNAPSHOT_MAGIC, 0)
  out.writeUInt32LE(c.dims, 8)
  out.writeUInt32LE(c.size, 12)
  out.writeDoubleLE(c.seq, 16)
  out.writeUInt32LE(json.length, 24)
  json.copy(out, SNAPSHOT_HEADER_BYTES)
  writeFloats(out, floatsAt, packRows(c))
  out.writeUInt32LE(crc32(out.subarray(8)), 4)
  return out
}

function decodeSnapshot(bytes: Buffer, collection: string): Collection {
  const corrupt = (why: string): UnexpectedResponseError =>
    new UnexpectedResponseError(BACKEND, `snapshot of vector collection ${collection} is corrupt: ${why}`)
  if (bytes.length < SNAPSHOT_HEADER_BYTES || bytes.readUInt32LE(0) !== SNAPSHOT_MAGIC) throw corrupt('bad header')
  if (crc32(bytes.subarray(8)) !== bytes.readUInt32LE(4)) throw corrupt('checksum mismatch')
  const dims = bytes.readUInt32LE(8)
  const count = bytes.readUInt32LE(12)
  const jsonLength = bytes.readUInt32LE(24)
  const rows = JSON.parse(bytes.toString('utf8', SNAPSHOT_HEADER_BYTES, SNAPSHOT_HEADER_BYTES + jsonLength)) as [
    string,
    VectorPayload
  ][]
  if (rows.length !== count) throw corrupt('row count mismatch')
  const c = new Collection(dims, count)
  const vectors = readFloats(bytes, align4(SNAPSHOT_HEADER_BYTES + jsonLength), count * dims)
  rows.forEach(([id, payload], row) => c.upsert(id, payload, vectors, row * dims))
  c.seq = bytes.readDoubleLE(16)
  return c
}

/** The matrix rows without their stride padding. */
function packRows(c: Collection): Float32Array {
  if (c.stride === c.dims) return c.matrix.subarray(0, c.size * c.dims)
  const packed = new Float32Array(c.size * c.dims)
  for (let row = 0; row < c.size; row++) {
    packed.set(c.matrix.subarray(row * c.stride, row * c.stride + c.dims), row * c.dims)
  }
  return packed
}

function align4(n: number): number {
  return (n + 3) & ~3
}

function writeFloats(into: Buffer, at: number, values: Float32Array): void {
  if (LITTLE_ENDIAN_HOST) {
    into.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at)
    return
  }
  for (let i = 0; i < values.length; i++) into.writeFloatLE(values[i]!, at + i * 4)
}

function readFloats(from: Buffer, at: number, count: number): Float32Array {
  const out = new Float32Array(count)
  if (LITTLE_ENDIAN_HOST) {
    new Uint8Array(out.buffer).set(from.subarray(at, at + count * 4))
    return out
  }
  for (let i = 0; i < count; i++) out[i] = from.readFloatLE(at + i * 4)
  return out
}
