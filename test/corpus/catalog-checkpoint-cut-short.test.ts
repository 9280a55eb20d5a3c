import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { readCheckpoint } from '../../src/corpus/documents/catalog-checkpoint.js'

// A process stopped in the middle of writing the catalog's checkpoint (catalog-checkpoint.ts) leaves the file it was
// replacing, whole. The write is cut at an exact byte by the kernel: the writer child runs under a file-size limit
// (`ulimit -f`, in KiB) below the new file's size, so the write that crosses it ends the process (SIGXFSZ) or fails
// (EFBIG), at 5% to 95% of the file. Checked: with the file written in place instead of beside and renamed, the first cut fails (`damaged (checksum)`).
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

const CHUNKS = 8_000
const WRITER = fileURLToPath(new URL('../helpers/catalog-checkpoint-writer.ts', import.meta.url))
const run = promisify(execFile)

/** Writes the checkpoint under `stamp` in a child, with the file size limited to `limitKiB` when given. */
async function write(file: string, stamp: string, limitKiB?: number): Promise<boolean> {
  const node = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(WRITER)} ${JSON.stringify(file)} ${CHUNKS} ${stamp}`
  const { stdout } = await run('bash', ['-c', `${limitKiB === undefined ? '' : `ulimit -f ${limitKiB}; `}exec ${node}`]).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }))
  return stdout.includes('wrote')
}

/** What the file holds: its stamp, when it reads whole under it, with its chunk count and a text of its own. */
async function held(file: string) {
  const bytes = await readFile(file)
  const probe = await readCheckpoint(file, { stamp: '', collection: 'chunks', namespace: 'default' })
  // whole: the checksum holds, so only the stamp keeps it from being read
  if (!('unused' in probe) || !probe.unused.startsWith('stale')) return { damaged: 'unused' in probe ? probe.unused : 'read under no stamp' }
  const stamp = (JSON.parse(bytes.toString('utf8', 12, 12 + bytes.readUInt32LE(8))) as { stamp: string }).stamp
  const got = await readCheckpoint(file, { stamp, collection: 'chunks', namespace: 'default' })
  if (!('catalog' in got)) return { damaged: got.unused }
  return { stamp, chunks: got.catalog.size, last: got.catalog.get(`d${CHUNKS / 8 - 1}#7`)?.text.split(' ')[0] }
}

describe('a checkpoint write cut short', () => {
  it('leaves the file it was replacing, whole, wherever the write stops', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-ckpt-cut-'))
    dirs.push(dir)
    const file = join(dir, 'chunks.catalog')
    expect(await write(file, 's0')).toBe(true)
    const sizeKiB = (await stat(file)).size / 1024
    expect(sizeKiB).toBeGreaterThan(200)
    for (const [round, share] of [0.05, 0.35, 0.65, 0.95].entries()) {
      expect(await write(file, `s${round + 1}`, Math.floor(sizeKiB * share)), `cut at ${share}`).toBe(false)
      expect(await held(file), `cut at ${share}`).toEqual({ stamp: 's0', chunks: CHUNKS, last: 's0' })
    }
    // and a write that is not cut replaces it
    expect(await write(file, 's9')).toBe(true)
    expect(await held(file)).toEqual({ stamp: 's9', chunks: CHUNKS, last: 's9' })
  }, 600_000)
})
