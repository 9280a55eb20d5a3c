/**
 * One tree's embedded lexical index opened on a copy of a kept index folder (issue 44): its typed arrays in bytes a
 * chunk, each segment's documents, terms and the bytes of its postings' ordinals and frequencies, a digest of the first
 * 300 CMRC questions' top 10, and the CPU of three passes over them. Run it once per tree on a fresh copy each time
 * (opening may remove files a manifest does not name), e.g. on a 100k index kept by `bench/memory.ts --keep`:
 *
 *   cp -r <DATA_DIR>/bm25/chunks /tmp/lex-copy && node --expose-gc --import tsx bench/lexical-opened.ts <tree> /tmp/lex-copy
 */
import { createHash } from 'node:crypto'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadCmrc } from './lib/cmrc.js'

const [tree, dir] = process.argv.slice(2)
if (!tree || !dir) throw new Error('usage: bench/lexical-opened.ts <tree> <copy of an index folder>')
const { EmbeddedLexicalIndex } = await import(pathToFileURL(join(resolve(tree), 'src/providers/lexical-index/embedded.ts')).href)
const queries = (await loadCmrc()).queries.slice(0, 300).map((q) => q.query)
const gc = (globalThis as { gc?: () => void }).gc!
gc(); gc()
const before = process.memoryUsage()
const index = new EmbeddedLexicalIndex({ dir })
await index.holding([])
await new Promise((turn) => setImmediate(turn))
gc(); gc()
const after = process.memoryUsage()
const digest = createHash('sha256')
for (const q of queries) digest.update(`${q}\u0000${JSON.stringify(await index.search(q, 10))}\n`)
const cpu = process.cpuUsage()
for (let pass = 0; pass < 3; pass++) for (const q of queries) await index.search(q, 10)
const used = process.cpuUsage(cpu)
type Held = { data: { docCount: number; termCount: number; postDocs: { BYTES_PER_ELEMENT: number }; postFreqs: { BYTES_PER_ELEMENT: number } } }
const segments = (index as unknown as { segments: Held[] }).segments
console.log(JSON.stringify({
  tree, documents: index.size, typed_array_bytes: index.memoryBytes, bytes_per_chunk: Math.round(index.memoryBytes / index.size),
  heap_and_external_delta_mib: Math.round(((after.heapUsed + after.external - before.heapUsed - before.external) / 2 ** 20) * 10) / 10,
  segments_docs_terms_docbytes_freqbytes: segments.map((s) => [s.data.docCount, s.data.termCount, s.data.postDocs.BYTES_PER_ELEMENT, s.data.postFreqs.BYTES_PER_ELEMENT]),
  search_cpu_seconds_900: (used.user + used.system) / 1e6, answers_digest: digest.digest('hex')
}))
await index.close()
