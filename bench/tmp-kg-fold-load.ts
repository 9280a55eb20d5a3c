import { cp, mkdtemp, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { EmbeddedKnowledgeGraphStore } from '../src/providers/knowledge-graph/embedded.js'
const from = process.argv[2]!
const dir = await mkdtemp('/work/s19/kg-')
try {
  for (const f of ['knowledge-graph.snap', 'knowledge-graph.log']) await cp(join(from, f), join(dir, f))
  const sizes = async () => Object.fromEntries(await Promise.all(['knowledge-graph.snap', 'knowledge-graph.log'].map(async (f) => [f, (await stat(join(dir, f))).size])))
  const timeLoad = async () => {
    globalThis.gc?.()
    const t = performance.now()
    const s = new EmbeddedKnowledgeGraphStore({ dir })
    await s.init()
    return { s, ms: Math.round(performance.now() - t) }
  }
  const a = await timeLoad()
  console.log('load as kept', a.ms, 'ms', await sizes())
  const t = performance.now()
  await a.s.upsert('default', { entities: [{ id: 'zz-fold-probe', name: 'zz fold probe', type: 'probe', aliases: [], source_chunk_ids: [] }], relations: [] } as never)
  await a.s.close()
  console.log('fold at close', Math.round(performance.now() - t), 'ms', await sizes())
  for (let i = 0; i < 2; i++) {
    const b = await timeLoad()
    console.log('load folded', b.ms, 'ms')
    await b.s.close()
  }
  const c = await timeLoad()
} finally {
  await rm(dir, { recursive: true, force: true })
}
