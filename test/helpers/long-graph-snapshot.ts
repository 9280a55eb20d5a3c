/**
 * Child process of `graph-snapshot-past-string-limit.test.ts`: writes one graph store's snapshot file in the store's
 * own form, its payload longer than V8's longest string, then opens the store on it and prints what it reads as one
 * JSON line. Usage: `long-graph-snapshot.ts <dir> knowledge-graph|episodic-graph <items> <textLength>`.
 */
import { constants } from 'node:buffer'
import { join } from 'node:path'
import { SnapshotFileWriter } from '../../src/providers/embedded/snapshot-stream.js'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'

const [dir, kind, itemsArg, lengthArg] = process.argv.slice(2) as [string, string, string, string]
const items = Number(itemsArg)
const textLength = Number(lengthArg)

/** Item `i`'s long text: its number, then letters, `textLength` characters of ASCII in all. */
const textOf = (i: number) => `${i}:`.padEnd(textLength, 'abcdefghijklmnopqrstuvwxyz')

function writeSnapshot(file: string, identity: { kind: string; format: number; reads?: number[] }, head: Buffer, row: (i: number) => string, tail: string): number {
  const out = new SnapshotFileWriter(file, 0, identity)
  let bytes = head.length
  out.write(head)
  for (let i = 0; i < items; i++) {
    const piece = Buffer.from(`${i === 0 ? '' : ','}${row(i)}`, 'utf8')
    bytes += piece.length
    out.write(piece)
  }
  out.write(Buffer.from(tail, 'utf8'))
  out.finish()
  return bytes + Buffer.byteLength(tail)
}

const middle = Math.floor(items / 2)
const picked = [0, middle, items - 1]

if (kind === 'knowledge-graph') {
  // the compact form: its marker, the tables, the items (imported ones whole), as `compact-graph.ts` writes it; the long
  // texts are the relations' (an entity's would be analysed for the keyword index, which is not what is tested here)
  const entities = Array.from({ length: items }, (_, i) => JSON.stringify({ id: `e${i}`, name: `实体${i}`, aliases: [], source_chunk_ids: [] }))
  const head = Buffer.concat([Buffer.from([0, 0x4b, 0x47, 0x32]), Buffer.from(`{"docs":[],"types":[],"entities":[${entities.join(',')}],"relations":[`, 'utf8')])
  const payloadBytes = writeSnapshot(join(dir, 'knowledge-graph.snap'), { kind: 'knowledge-graph', format: 2, reads: [1] }, head,
    (i) => JSON.stringify({ id: `r${i}`, source: `e${i}`, target: `e${(i + 1) % items}`, type: 'next', weight: 1, description: textOf(i) }), ']}')
  const store = new EmbeddedKnowledgeGraphStore({ dir })
  const count = await store.count('default')
  const [first] = await store.getEntities('default', ['e0'])
  const relations = await Promise.all(picked.map((i) => store.neighbourhood('default', [`e${i}`])))
  console.log(JSON.stringify({
    payloadBytes, maxString: constants.MAX_STRING_LENGTH, count, first: first?.name,
    picked: picked.map((i, k) => relations[k]!.relations.find((r) => r.id === `r${i}`))
      .map((r) => ({ id: r?.id, ends: `${r?.source}>${r?.target}`, length: r?.description?.length, start: r?.description?.slice(0, 12) }))
  }))
  await store.close()
} else {
  // `{"version":1,"entities":[…],"episodes":[…]}`, as `EpisodicPartition.toSnapshot` gives it
  const head = Buffer.from(`{"version":1,"entities":[${JSON.stringify({ id: 'n', type: 'Entity', name: '网关' })}],"episodes":[`, 'utf8')
  const payloadBytes = writeSnapshot(join(dir, 'graph.snap'), { kind: 'episodic-graph', format: 1 }, head,
    (i) => JSON.stringify({
      episode: { id: `ep${i}`, type: 'Episode', name: `第${i}集`, summary: textOf(i) }, nodes: [],
      edges: [{ from: `ep${i}`, to: 'n', relationship_name: 'involves_entity', edge_text: `e${i}` }]
    }), ']}')
  const store = new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') })
  const counts = await store.countByType('default')
  const fragment = await store.describe('default', picked.map((i) => `ep${i}`))
  console.log(JSON.stringify({
    payloadBytes, maxString: constants.MAX_STRING_LENGTH, counts,
    picked: picked.map((i) => fragment.nodes.get(`ep${i}`)).map((n) => ({ id: n?.id, name: n?.name, length: n?.summary?.length, start: n?.summary?.slice(0, 12) }))
  }))
  await store.close()
}
