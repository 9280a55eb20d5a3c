/**
 * A child process for the kill-during-compaction test: opens the embedded knowledge graph in `argv[2]` with
 * compaction due after every write, then upserts entities e<from>, e<from+1>, ... (each with a long description, so
 * that a fold takes a while), printing `ack <i>` once each write resolved, until it is killed.
 */
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'

const [dir, from] = [process.argv[2]!, Number(process.argv[3])]
const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
await store.init()
process.stdout.write('ready\n')
for (let i = from; ; i++) {
  await store.upsert('default', {
    entities: [{ id: `e${i}`, name: `名称${i}`, description: `描述${i} `.repeat(200), aliases: [], source_chunk_ids: [] }],
    ...(i > 0 ? { relations: [{ id: `r${i}`, source: `e${i}`, target: `e${i - 1}`, type: 'next', weight: 1 }] } : {})
  })
  process.stdout.write(`ack ${i}\n`)
}
