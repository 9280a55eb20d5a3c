/**
 * The embedded knowledge graph killed (SIGKILL) while a compaction runs: the writer is a child process writing
 * entity after entity with compaction due after every write; it is killed at moments when its log is set aside for a
 * fold (`knowledge-graph.fold.log` exists), a little later each time. Each restart must hold exactly the entities
 * of the writes that resolved (and at most the one in flight, which may have been logged before the kill), as an
 * unbroken run e0, e1, ..., with the relations joining them.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'

const WRITER = fileURLToPath(new URL('../helpers/kg-compaction-writer.ts', import.meta.url))
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

/** Starts the writer at entity `from` and kills it `delayMs` after it set its log aside for a fold, with at least `minAcks` writes resolved. */
async function writeUntilKilled(dir: string, from: number, minAcks: number, delayMs: number): Promise<{ acked: number; sawFold: boolean }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(from)], { stdio: ['ignore', 'pipe', 'inherit'] })
  let acked = from - 1
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    const lines = buffered.split('\n')
    buffered = lines.pop()!
    for (const line of lines) if (line.startsWith('ack ')) acked = Number(line.slice(4))
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const foldFile = join(dir, 'knowledge-graph.fold.log')
  let sawFold = false
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (acked - from + 1 >= minAcks && existsSync(foldFile)) {
      sawFold = true
      break
    }
    await new Promise((r) => setTimeout(r, 1))
  }
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
  child.kill('SIGKILL')
  await exited
  return { acked, sawFold }
}

describe('the embedded knowledge graph killed during a compaction restarts to the last write it logged', () => {
  it('holds every resolved write, nothing half, after kills at several points of the fold', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-fold-crash-'))
    dirs.push(dir)
    let next = 0
    for (const delayMs of [0, 5, 20, 60, 150]) {
      const { acked, sawFold } = await writeUntilKilled(dir, next, 40, delayMs)
      expect(sawFold).toBe(true)
      const store = new EmbeddedKnowledgeGraphStore({ dir })
      const { entities, relations } = await store.count('default')
      // the write in flight at the kill may have been logged before it: one more, never fewer
      expect(entities === acked + 1 || entities === acked + 2).toBe(true)
      expect(relations).toBe(entities - 1)
      const ids = Array.from({ length: entities }, (_, i) => `e${i}`)
      expect((await store.getEntities('default', ids)).map((e) => e.id).sort()).toEqual([...ids].sort())
      const last = (await store.getEntities('default', [`e${entities - 1}`]))[0]!
      expect(last.description).toBe(`描述${entities - 1} `.repeat(200))
      expect((await store.neighbourhood('default', [`e${entities - 1}`])).relations.map((r) => r.id)).toEqual([`r${entities - 1}`])
      await store.close()
      next = entities
    }
    // the last restart finished the interrupted fold: the files are a snapshot and a log again
    const store = new EmbeddedKnowledgeGraphStore({ dir })
    await store.init()
    await store.close()
    expect((await readdir(dir)).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap'])
  }, 300_000)
})
