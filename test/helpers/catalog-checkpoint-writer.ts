/**
 * A child process for the cut-short checkpoint test: builds a catalog of `argv[3]` chunks and writes it once to the
 * checkpoint file `argv[2]` under the stamp `argv[4]`, then prints `wrote`.
 */
import { writeCheckpoint } from '../../src/corpus/documents/catalog-checkpoint.js'
import { ChunkCatalog } from '../../src/corpus/documents/chunk-catalog.js'

const [file, chunks, stamp] = [process.argv[2]!, Number(process.argv[3]), process.argv[4]!]
const catalog = new ChunkCatalog()
for (let i = 0; i < chunks; i++) {
  const doc = `d${Math.floor(i / 8)}`
  catalog.add({ id: `${doc}#${i % 8}`, doc_id: doc, chunk_index: i % 8, source: doc, text: `${stamp} 第${i}段：${'差旅报销与咳嗽随访。'.repeat(10)}` })
}
await writeCheckpoint(file, catalog, { stamp, collection: 'chunks', namespace: 'default' })
process.stdout.write('wrote\n')
