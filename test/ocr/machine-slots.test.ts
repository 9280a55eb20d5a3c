/**
 * The machine-wide OCR slots (src/ocr/machine-slots.ts) on real `flock` locks: two bounds over one folder (each with
 * its own in-process queue, as two processes have) never run work together at a size of 1; a wait aborted leaves no
 * lock behind; a folder or command that cannot lock is a reason.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MachineSlots } from '../../src/ocr/machine-slots.js'

const hasFlock = spawnSync('flock', ['--version']).status === 0
if (!hasFlock) console.warn('ocr/machine-slots.test.ts skipped: no util-linux flock')

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
const folder = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-slots-'))
  dirs.push(dir)
  return dir
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const free = (dir: string, slot = 0) => spawnSync('flock', ['--nonblock', join(dir, `slot-${slot}`), 'true']).status === 0

describe.skipIf(!hasFlock)('MachineSlots', () => {
  it('two bounds over one folder at size 1 run one work at a time; at size 2, two', async () => {
    for (const [size, expected] of [[1, 1], [2, 2]] as const) {
      const dir = await folder()
      const [a, b] = [new MachineSlots(dir, size), new MachineSlots(dir, size)]
      expect(await a.health()).toEqual({ ok: true })
      let now = 0
      let most = 0
      const work = async () => {
        most = Math.max(most, ++now)
        await sleep(150)
        now--
      }
      await Promise.all([a, b, a, b].map((s) => s.run(work)))
      expect(most).toBe(expected)
    }
  }, 60_000)

  it('a wait aborted rejects with its reason and leaves no lock: the slot is free once its holder ends', async () => {
    const dir = await folder()
    const [a, b] = [new MachineSlots(dir, 1), new MachineSlots(dir, 1)]
    let release!: () => void
    const holding = a.run(() => new Promise<void>((r) => { release = r }))
    await sleep(300)
    expect(free(dir)).toBe(false)
    const stop = new AbortController()
    const waiting = b.run(async () => 'ran', stop.signal)
    await sleep(200)
    stop.abort(new Error('cancelled'))
    await expect(waiting).rejects.toThrow('cancelled')
    release()
    await holding
    const end = Date.now() + 5000
    while (!free(dir) && Date.now() < end) await sleep(50)
    expect(free(dir)).toBe(true)
    expect(await b.run(async () => 'ran')).toBe('ran')
  }, 60_000)

  it('a command that cannot run is a reason naming OCR_SLOTS_DIR', async () => {
    const health = await new MachineSlots(await folder(), 1, 'no-such-flock').health()
    expect(health).toMatchObject({ ok: false })
    expect((health as { reason: string }).reason).toContain('OCR_SLOTS_DIR')
    expect((health as { reason: string }).reason).toContain('no-such-flock')
  })
})
