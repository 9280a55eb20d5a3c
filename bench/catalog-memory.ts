/**
 * The document catalog's and the embedded lexical index's own memory per chunk (issue 44, items 1 and 5), this tree
 * beside another (`--base DIR`) in one run: documents shaped as `bench/memory.ts` makes them (8 sections of CMRC
 * sentence windows, the real chunker, versions and fingerprint as a write stores them), chunked once here and written to
 * a file as the vector store's records (id and payload); then each tree, in a process of its own, measures each store
 * alone, heap and off-heap (after two full collections, less what the process held before the store):
 *   - the catalog (a namespace's `DocumentLibrary` state): built as the writers build it (50 documents a write), then
 *     read again from the records' payloads as `open()` reads them from the vector store, then after reads (every
 *     chunk, every document's stored chunks, held-unchanged, pages, summaries, source prefixes);
 *   - the lexical index (`EmbeddedLexicalIndex`, on disk): written 50 documents a write, then closed and opened again
 *     (`sync` with every chunk, as `open()` does), then after 300 CMRC questions; its typed arrays by part;
 * the CPU time of each build, reopen and the reads (the process's, the lexical worker thread's included), and a digest of every
 * answer (catalog reads, canonical JSON; the lexical searches' ids and scores), which must be the same in both trees.
 *
 * With `--rounds N` the trees run N times, in turns (this, base; then base, this; …); the CPU ratios are of the
 * rounds' sums, the bytes and digests the first round's.
 *
 *   node --expose-gc --import tsx bench/catalog-memory.ts --chunks 20000 [--base DIR] [--rounds N] [--heap-snapshot DIR] [--out FILE]
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { writeHeapSnapshot } from 'node:v8'
import { CHUNKER_VERSION } from '../src/corpus/chunker.js'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { documentFingerprint } from '../src/corpus/fingerprint.js'
import { analyzerTag } from '../src/kernel/analyzers.js'
import { encodeChunk } from '../src/kernel/chunk-payload.js'
import { loadCmrc } from './lib/cmrc.js'
import { sectionedDocuments, standInEmbedder, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, measureInChild, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '20000' }, base: { type: 'string' }, out: { type: 'string' }, rounds: { type: 'string', default: '1' },
    'heap-snapshot': { type: 'string' }, worker: { type: 'string' }, name: { type: 'string' }, records: { type: 'string' }, queries: { type: 'string' }
  }
})
const MiB = 2 ** 20
const NAMESPACE = 'bench'
const BATCH = 50
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

if (args.worker) await worker(args.worker, args.records!, args.queries!)
else await main()

async function main(): Promise<void> {
  const target = Number(args.chunks)
  const startedLoad = loadavg().map((x) => round(x))
  const cmrc = await loadCmrc()
  const passages = syntheticDocuments(cmrc.documents.map((d) => d.text), Math.ceil(target * 1.1), 7).map((d) => d.text)
  const versions = { chunker: CHUNKER_VERSION, analyzer: analyzerTag('cjk-bigram'), model: standInEmbedder.model }
  const dir = await mkdtemp(join(tmpdir(), 'recall-catalog-memory-'))
  const file = join(dir, 'records.jsonl')
  const queries = join(dir, 'queries.json')
  const lines: string[] = []
  let chunks = 0
  let documents = 0
  let batch: Array<[string, unknown]> = []
  for (const document of sectionedDocuments(passages, 8)) {
    if (chunks >= target) break
    const fingerprint = documentFingerprint(document)
    for (const c of chunkDocument(document)) batch.push([c.id, encodeChunk({ ...c, versions, fingerprint })])
    documents += 1
    chunks = chunks + chunkDocument(document).length
    if (documents % BATCH === 0) {
      lines.push(JSON.stringify(batch))
      batch = []
    }
  }
  if (batch.length > 0) lines.push(JSON.stringify(batch))
  await writeFile(file, `${lines.join('\n')}\n`)
  await writeFile(queries, JSON.stringify(cmrc.queries.slice(0, 300).map((q) => q.query)))
  log(`chunked ${documents} documents, ${chunks} chunks, ${lines.length} writes`)
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const results: Record<string, Record<string, unknown>> = {}
  const cpuKeys = ['catalog_build_cpu_seconds', 'catalog_open_cpu_seconds', 'catalog_reads_cpu_seconds', 'lexical_write_cpu_seconds', 'lexical_open_cpu_seconds', 'lexical_search_cpu_seconds'] as const
  const cpu: Record<string, Record<string, number[]>> = Object.fromEntries(trees.map((t) => [t.name, Object.fromEntries(cpuKeys.map((k) => [k, []]))]))
  for (let r = 0; r < Number(args.rounds); r++) for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
    const result = await measureInChild(fileURLToPath(import.meta.url), tree, ['--records', file, '--queries', queries, ...(args['heap-snapshot'] ? ['--heap-snapshot', args['heap-snapshot']] : [])])
    results[tree.name] ??= result
    for (const k of cpuKeys) cpu[tree.name]![k]!.push(result[k] as number)
    log(`round ${r + 1}, ${tree.name} (${tree.commit}, load ${loadavg()[0]!.toFixed(1)}): ${JSON.stringify(result)}`)
  }
  await rm(dir, { recursive: true, force: true })
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const perChunk = (tree: string, store: string, at: string) => ((results[tree]![store] as Record<string, { bytes_per_chunk: number }>)[at]!).bytes_per_chunk
  const report = {
    generated_by: 'bench/catalog-memory.ts', at: new Date().toISOString(), chunks, documents, rounds: Number(args.rounds),
    trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
    load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => round(x)),
    results, cpu_seconds_by_round: cpu,
    ...(results['base'] ? {
      same_answers: {
        catalog: results['this']!['catalog_digest'] === results['base']['catalog_digest'],
        lexical: results['this']!['lexical_digest'] === results['base']['lexical_digest']
      },
      this_over_base_cpu: Object.fromEntries(cpuKeys.map((k) => [k, round(sum(cpu['this']![k]!) / sum(cpu['base']![k]!), 3)])),
      this_over_base_bytes: Object.fromEntries(['catalog', 'lexical'].map((store) => [store, Object.fromEntries(['after_ingest', 'after_restart', 'after_reads'].map((at) => [at, round(perChunk('this', store, at) / perChunk('base', store, at), 3)]))]))
    } : {})
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

/** JSON with keys in order, so that a record's key order (which the catalog does not promise) does not change a digest. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value)
}

async function worker(treeDir: string, records: string, queriesFile: string): Promise<void> {
  const tree = loadTree('tree', treeDir)
  const [{ DocumentLibrary }, { STATE, lexicalDocuments }, { decodeChunk }, { EmbeddedLexicalIndex }, { EmbeddedLexicalIndexes }, { EmbeddedVectorStore }] = await Promise.all([
    tree.module('src/corpus/documents/library.ts'), tree.module('src/corpus/documents/library-state.ts'), tree.module('src/kernel/chunk-payload.ts'),
    tree.module('src/providers/lexical-index/embedded.ts'), tree.module('src/providers/lexical-index/indexes.ts'), tree.module('src/providers/vector-store/embedded.ts')
  ])
  const gc = (globalThis as { gc?: () => void }).gc!
  const held = async () => {
    await new Promise((turn) => setImmediate(turn))
    gc(); gc()
    const m = process.memoryUsage()
    return { heap: m.heapUsed, external: m.external, rss: m.rss }
  }
  const cpuSeconds = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since)
    return (used.user + used.system) / 1e6
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-catalog-memory-store-'))
  const writes: Array<Array<[string, { doc_id: string; text: string }]>> = []
  for await (const line of createInterface({ input: createReadStream(records) })) if (line) writes.push(JSON.parse(line))
  const chunks = writes.reduce((n, w) => n + w.length, 0)
  const at = (m: Awaited<ReturnType<typeof held>>, base: Awaited<ReturnType<typeof held>>) => ({
    heap_mib: round((m.heap - base.heap) / MiB), off_heap_mib: round((m.external - base.external) / MiB), rss_mib: round(m.rss / MiB),
    bytes_per_chunk: Math.round((m.heap + m.external - base.heap - base.external) / chunks)
  })
  const snapshot = (label: string) => {
    if (args['heap-snapshot']) log(`heap snapshot: ${writeHeapSnapshot(join(args['heap-snapshot'], `${args.name}-${label}.heapsnapshot`))}`)
  }

  // the catalog alone: a library whose stores are never read (its state is set as its writers and open() set it)
  const ports = {
    vectors: new EmbeddedVectorStore({ dir: join(dir, 'vectors') }), embedder: standInEmbedder,
    lexical: new EmbeddedLexicalIndexes({ dir: join(dir, 'unused-bm25'), name: 'chunks' })
  }
  const place = { collection: 'chunks', namespace: NAMESPACE }
  const catalogBase = await held()
  // each build in a function of its own: an async function's suspended frame would keep its loops' last values alive
  const byWrites = () => {
    const built = new DocumentLibrary(ports, place)
    const state = built[STATE]
    for (const w of writes) {
      // fresh objects per write, as a write's chunks are
      const written = (JSON.parse(JSON.stringify(w)) as typeof w).map(([id, payload]) => decodeChunk(id, payload))
      state.forget([...new Set(written.map((c: { doc_id: string }) => c.doc_id))])
      for (const c of written) state.track(c)
    }
    return built
  }
  const byOpen = () => {
    const built = new DocumentLibrary(ports, place)
    // what open() does with the vector store's scroll: one decoded record per point, in id order
    const all = writes.flat().sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    const catalog = new Map()
    for (const [id, payload] of all) catalog.set(id, decodeChunk(id, JSON.parse(JSON.stringify(payload))))
    // a Map of records before the catalog in columns (6b67885), the records since
    const state = built[STATE]
    state.reset(state.catalog instanceof Map ? catalog : [...catalog.values()])
    return built
  }
  let cpu = process.cpuUsage()
  let library = byWrites()
  const catalogBuildCpu = cpuSeconds(cpu)
  const catalogAfterIngest = at(await held(), catalogBase)
  library = undefined as never
  const catalogBase2 = await held()
  cpu = process.cpuUsage()
  library = byOpen()
  const catalogOpenCpu = cpuSeconds(cpu)
  const catalogAfterRestart = at(await held(), catalogBase2)
  snapshot('catalog')
  cpu = process.cpuUsage()
  const digest = createHash('sha256')
  const add = (label: string, value: unknown) => digest.update(`${label}\u0000${canonical(value)}\n`)
  add('counts', [library.chunkCount, library.documentCount])
  for (const w of writes) for (const [id] of w) add(`chunk ${id}`, library.chunk(id))
  add('no chunk', library.chunk('nope#0') ?? null)
  const docIds = [...new Set(writes.flat().map(([, p]) => p.doc_id))]
  for (const id of docIds) {
    add(`stored ${id}`, [...library.storedChunks(id)])
    add(`summary ${id}`, library.summary(id) ?? null)
    add(`has ${id}`, library.has(id))
    const fingerprint = (writes.flat().find(([, p]) => p.doc_id === id)![1] as { fingerprint?: string }).fingerprint
    add(`unchanged ${id}`, library.heldUnchanged(id, fingerprint ?? '') ?? null)
  }
  add('list', library.list())
  for (let after: string | undefined, page = library.page(undefined, 100); page.length > 0; after = page[page.length - 1]!.id, page = library.page(after, 100)) add(`page ${after}`, page)
  add('prefix', library.docIdsWithSourcePrefix('mem-00001'))
  add('lexical documents', lexicalDocuments(docIds.flatMap((id) => [...library.storedChunks(id).keys()]).map((id) => library.chunk(id))))
  const catalogReadsCpu = cpuSeconds(cpu)
  const catalogAfterReads = at(await held(), catalogBase2)
  const catalogDigest = digest.digest('hex')
  library = undefined as never

  // the lexical index alone, on disk
  const queries = JSON.parse(await (await import('node:fs/promises')).readFile(queriesFile, 'utf8')) as string[]
  const lexicalDir = join(dir, 'bm25')
  const lexicalBase = await held()
  let index = new EmbeddedLexicalIndex({ dir: lexicalDir })
  cpu = process.cpuUsage()
  for (const w of writes) {
    const written = w.map(([id, payload]) => decodeChunk(id, payload))
    await index.write({ delete: [], upsert: lexicalDocuments(written) })
  }
  await index.idle()
  const lexicalWriteCpu = cpuSeconds(cpu)
  const lexicalParts = parts(index)
  const lexicalAfterIngest = at(await held(), lexicalBase)
  const segmentsAfterIngest = index.segmentCount
  await index.close()
  index = undefined as never
  const lexicalBase2 = await held()
  cpu = process.cpuUsage()
  const reopen = async () => {
    const opened = new EmbeddedLexicalIndex({ dir: lexicalDir })
    await opened.sync(lexicalDocuments(writes.flat().map(([id, payload]) => decodeChunk(id, payload))))
    await opened.idle()
    return opened
  }
  index = await reopen()
  const lexicalOpenCpu = cpuSeconds(cpu)
  const lexicalAfterRestart = at(await held(), lexicalBase2)
  snapshot('lexical')
  const lexicalDigest = createHash('sha256')
  for (const q of queries) lexicalDigest.update(`${q}\u0000${JSON.stringify(await index.search(q, 10))}\n`)
  lexicalDigest.update(JSON.stringify([...await index.holding([writes[0]![0]![0], writes.at(-1)!.at(-1)![0], 'nope#1'])].sort()))
  const lexicalAfterReads = at(await held(), lexicalBase2)
  // the searches' own CPU: three passes over the questions, the first one's answers above already hashed
  cpu = process.cpuUsage()
  for (let pass = 0; pass < 3; pass++) for (const q of queries) await index.search(q, 10)
  const lexicalSearchCpu = cpuSeconds(cpu)
  const lexicalPartsAfterRestart = parts(index)
  await index.close()
  await rm(dir, { recursive: true, force: true })
  process.send!({
    chunks, documents: docIds.length,
    catalog: { after_ingest: catalogAfterIngest, after_restart: catalogAfterRestart, after_reads: catalogAfterReads },
    catalog_build_cpu_seconds: round(catalogBuildCpu, 3), catalog_open_cpu_seconds: round(catalogOpenCpu, 3), catalog_reads_cpu_seconds: round(catalogReadsCpu, 3), catalog_digest: catalogDigest,
    lexical: { after_ingest: lexicalAfterIngest, after_restart: lexicalAfterRestart, after_reads: lexicalAfterReads },
    lexical_segments_after_ingest: segmentsAfterIngest,
    lexical_parts_bytes_per_chunk_after_ingest: perChunkOf(lexicalParts, chunks), lexical_parts_bytes_per_chunk_after_restart: perChunkOf(lexicalPartsAfterRestart, chunks),
    lexical_write_cpu_seconds: round(lexicalWriteCpu, 3), lexical_open_cpu_seconds: round(lexicalOpenCpu, 3), lexical_search_cpu_seconds: round(lexicalSearchCpu, 3), lexical_digest: lexicalDigest.digest('hex')
  }, () => process.exit(0))
}

/** The index's typed arrays by name, summed over its segments (bytes), with postings and terms counted. */
function parts(index: unknown): Record<string, number> {
  const out: Record<string, number> = {}
  const segments = (index as { segments: Array<{ data: Record<string, unknown>; deleted: Uint8Array | null; deletedDf: Uint32Array | null }> }).segments
  for (const s of segments) {
    for (const [k, v] of Object.entries(s.data)) if (ArrayBuffer.isView(v)) out[k] = (out[k] ?? 0) + v.byteLength
    out['postings (count)'] = (out['postings (count)'] ?? 0) + ((s.data['postStarts'] as Uint32Array).at(-1) ?? 0)
    out['terms (count)'] = (out['terms (count)'] ?? 0) + (s.data['termCount'] as number)
    out['deleted'] = (out['deleted'] ?? 0) + (s.deleted?.byteLength ?? 0) + (s.deletedDf?.byteLength ?? 0)
  }
  return out
}

function perChunkOf(bytes: Record<string, number>, chunks: number): Record<string, number> {
  return Object.fromEntries(Object.entries(bytes).map(([k, v]) => [k, Math.round((v / chunks) * 100) / 100]))
}
