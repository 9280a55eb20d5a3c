/**
 * The file a ranged knowledge-graph fold writes its log's shares to (`spill-file.ts`): entries added to lists in any
 * interleaving come back per list in the order added, whether a list's entries sit in one block or are spread over many
 * blocks between other lists' blocks; the file is gone after `remove`.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { SpillFile } from '../../src/providers/knowledge-graph/spill-file.js'
import { seededRandom } from '../../src/evaluation/statistics.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('a spill file of numbered lists', () => {
  it('gives each list its entries back in the order added, across blocks of any size', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-spill-'))
    dirs.push(dir)
    const next = seededRandom(7)
    const words = ['', 'a', '北京', '😀', '{"op":"put"}', 'x'.repeat(300)]
    for (const blockBytes of [1, 20, 1_000_000]) {
      const added: Array<Array<[number, string]>> = [[], [], [], []]
      const spill = new SpillFile(join(dir, `shares-${blockBytes}`), 4, blockBytes)
      for (let at = 0; at < 200; at++) {
        // each record goes to some of the lists (list 2 to none), as a record's shares go to the ranges it names
        for (const list of [0, 1, 3]) {
          if (next() < 0.5) continue
          const text = `${words[Math.floor(next() * words.length)]}${at}`
          spill.add(list, at, text)
          added[list]!.push([at, text])
        }
      }
      spill.finish()
      for (let list = 0; list < 4; list++) {
        const read = [...spill.read(list)].map(([at, bytes]) => [at, bytes.toString('utf8')])
        expect(read).toEqual(added[list])
      }
      expect(added[2]).toEqual([])
      // a list read twice reads the same
      expect([...spill.read(3)].length).toBe(added[3]!.length)
      spill.remove()
      expect(existsSync(join(dir, `shares-${blockBytes}`))).toBe(false)
    }
  })
})
