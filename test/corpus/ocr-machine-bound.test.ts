/**
 * OCR_CONCURRENCY holds across the processes of a machine (src/ocr/machine-slots.ts): two child processes, each
 * opening the OCR reader as the CLI and the service do and reading a real two-page TIFF (test/fixtures/ocr/make.sh,
 * ImageMagick), share the slots of one OCR_SLOTS_DIR. The real tesseract runs; the `tesseract` the children find on
 * their PATH is a shell script that logs when each recognition starts and ends, then runs it. A holder killed with
 * SIGKILL leaves no slot taken.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { loggedTesseract, mostAtOnce, recognitions } from '../helpers/logged-tesseract.js'

const OCR = join(import.meta.dirname, '../fixtures/ocr')
const CHILD = fileURLToPath(new URL('../helpers/ocr-reader-child.ts', import.meta.url))
const hasOcr = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout?.split('\n').includes('chi_sim') ?? false
const hasFlock = spawnSync('flock', ['--version']).status === 0
if (!hasOcr || !hasFlock) console.warn('corpus/ocr-machine-bound.test.ts skipped: needs tesseract with chi_sim and util-linux flock (scripts/setup.sh installs them)')

const dirs: string[] = []
const children: ChildProcess[] = []
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** A folder with the logging `tesseract`, its log, and a slots folder. */
async function setUp() {
  const dir = await mkdtemp(join(tmpdir(), 'recall-ocr-bound-'))
  dirs.push(dir)
  return { dir, ...await loggedTesseract(dir), slots: join(dir, 'slots') }
}

function reader(env: { bin: string; slots: string }, concurrency: number, file: string): { child: ChildProcess; done: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], {
    env: { ...process.env, PATH: `${env.bin}:${process.env.PATH}`, OCR_SLOTS_DIR: env.slots, OCR_CONCURRENCY: String(concurrency), OCR_LANGUAGES: 'chi_sim+eng' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  children.push(child)
  let out = ''
  child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  const done = new Promise<string>((resolve, reject) => child.once('exit', (code, signal) => (code === 0 ? resolve(out.trim()) : reject(new Error(`child exited ${code ?? signal}: ${out}`)))))
  done.catch(() => undefined)
  return { child, done }
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe.skipIf(!hasOcr || !hasFlock)('OCR_CONCURRENCY across processes (OCR_SLOTS_DIR)', () => {
  it('two processes at a bound of 1: never two pages in recognition at once, both files read whole', async () => {
    const env = await setUp()
    const file = join(OCR, 'handbook-p2-3.tiff')
    const [a, b] = [reader(env, 1, file), reader(env, 1, file)]
    expect(await a.done).toBe('read read 2')
    expect(await b.done).toBe('read read 2')
    const seen = await recognitions(env.log)
    expect(seen).toHaveLength(4)
    expect(mostAtOnce(seen)).toBe(1)
  }, 600_000)

  it('at a bound of 2 the same two processes do overlap (the log sees concurrency when it is allowed)', async () => {
    const env = await setUp()
    const file = join(OCR, 'handbook-p2-3.tiff')
    const [a, b] = [reader(env, 2, file), reader(env, 2, file)]
    await Promise.all([a.done, b.done])
    expect(mostAtOnce(await recognitions(env.log))).toBe(2)
  }, 600_000)

  it('a holder killed during its recognition leaves its slot free: the lock is taken until then, and another process reads after it', async () => {
    const env = await setUp()
    const file = join(OCR, 'handbook-p2-3.tiff')
    const a = reader(env, 1, file)
    await until(async () => (await readFile(env.log, 'utf8')).includes('start'), 120_000)
    const slot = join(env.slots, 'slot-0')
    // held: a non-blocking lock of the slot is refused
    expect(spawnSync('flock', ['--nonblock', slot, 'true']).status).not.toBe(0)
    a.child.kill('SIGKILL')
    await until(async () => spawnSync('flock', ['--nonblock', slot, 'true']).status === 0, 10_000)
    const b = reader(env, 1, file)
    expect(await b.done).toBe('read read 2')
  }, 600_000)
})
