/**
 * Upload jobs (`POST /ingest/files`) side by side, and a cancel while a file is in OCR. The files are real
 * (test/fixtures/ocr/make.sh: poppler, img2pdf, ImageMagick) and the real tesseract runs, behind a script on the PATH
 * that logs each recognition (test/helpers/logged-tesseract.ts); the slots are a folder of this test's own
 * (OCR_SLOTS_DIR), so that other processes of the machine do not share them. What a question must find comes from
 * poppler's text of the pages the scans were made from (test/fixtures/ocr/*.pdftotext.txt).
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { loggedTesseract, mostAtOnce, recognitions } from '../../helpers/logged-tesseract.js'
import { formBody } from '../../helpers/multipart.js'

const OCR = join(import.meta.dirname, '../../fixtures/ocr')
const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasOcr = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && spawnSync('pdftoppm', ['-v']).status === 0 && spawnSync('flock', ['--version']).status === 0
if (!hasOcr) console.warn('http/routes/ingest-files-jobs.test.ts skipped: no tesseract with chi_sim, pdftoppm or flock (scripts/setup.sh installs them)')

interface JobView {
  id: string; state: string; status_url: string; cancel_requested: boolean
  files: { done: number; total: number }; pages: { done: number; total: number }; documents: { done: number; total: number }
  result?: { documents: number; generation?: number }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe.skipIf(!hasOcr)('upload jobs while OCR runs', () => {
  let t: TestApp
  let dir: string
  let slots: string
  const path = process.env.PATH

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-upload-jobs-'))
    slots = join(dir, 'slots')
    t = await buildTestApp({ OCR_CONCURRENCY: '1', OCR_SLOTS_DIR: slots, EMBEDDING_TIMEOUT_MS: '60000' })
  })
  afterAll(async () => {
    process.env.PATH = path
    await t?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const upload = async (namespace: string, files: string[]): Promise<JobView> => {
    const body = await formBody(await Promise.all(files.map(async (f) => ({ name: f, bytes: await readFile(join(OCR, f)) }))), { namespace })
    const res = await t.app.inject({ method: 'POST', url: '/ingest/files', ...body })
    expect(res.statusCode, res.body).toBe(202)
    return res.json() as JobView
  }
  const view = async (url: string): Promise<JobView> => (await t.app.inject({ method: 'GET', url })).json() as JobView
  const ended = (url: string) => until(async () => { const v = await view(url); return v.state === 'running' ? undefined : v }, 600_000, 'the job to end')

  it('a job sent while another reads: both end done, both documents are found, and one page at a time is in recognition across them', async () => {
    const logged = await loggedTesseract(join(dir, 'side-by-side'))
    process.env.PATH = `${logged.bin}:${path}`
    const [nsA, nsB] = [`jobs-a-${randomBytes(3).toString('hex')}`, `jobs-b-${randomBytes(3).toString('hex')}`]
    const a = await upload(nsA, ['handbook-p2-3.tiff'])
    // B is sent once A is in recognition
    await until(async () => ((await readFile(logged.log, 'utf8')).includes('start') ? true : undefined), 300_000, 'A\'s first recognition')
    expect((await view(a.status_url)).state).toBe('running')
    const b = await upload(nsB, ['manual-p1.jpg'])
    const [endA, endB] = await Promise.all([ended(a.status_url), ended(b.status_url)])
    expect(endA).toMatchObject({ state: 'done', files: { done: 1, total: 1 }, pages: { done: 2, total: 2 }, documents: { done: 1, total: 1 } })
    expect(endB).toMatchObject({ state: 'done', files: { done: 1, total: 1 }, pages: { done: 1, total: 1 }, documents: { done: 1, total: 1 } })
    const seen = await recognitions(logged.log)
    expect(seen).toHaveLength(3)
    expect(mostAtOnce(seen)).toBe(1)
    for (const [namespace, question, source, generation] of [
      [nsA, 'TK-4150 硒鼓可以打印多少页', 'handbook-p2-3.tiff', endA.result?.generation],
      [nsB, '开机前要检查电源线和散热风扇吗', 'manual-p1.jpg', endB.result?.generation]
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query: question, top_k: 3, min_generation: generation } })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().recall_bundle[0]).toMatchObject({ source })
    }
  }, 900_000)

  it('a cancel while a page is in recognition ends its tesseract, frees its slot, and writes nothing of that file or the next', async () => {
    const logged = await loggedTesseract(join(dir, 'cancel'), { exec: true })
    process.env.PATH = `${logged.bin}:${path}`
    const namespace = `jobs-cancel-${randomBytes(3).toString('hex')}`
    const job = await upload(namespace, ['handbook-scanned.pdf', 'handbook-p1.png'])
    const [first] = await until(async () => { const r = await recognitions(logged.log); return r.length > 0 ? r : undefined }, 300_000, 'a recognition')
    const lockedNow = spawnSync('flock', ['--nonblock', join(slots, 'slot-0'), 'true']).status
    const res = await t.app.inject({ method: 'DELETE', url: `/ingest/jobs/${job.id}` })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ cancel_requested: true })
    const end = await ended(job.status_url)
    // the scan's 4 pages were not all read, neither file counts as read, nothing was written
    expect(end).toMatchObject({ state: 'cancelled', files: { done: 0, total: 2 }, documents: { done: 0, total: 0 } })
    expect(end.pages.done).toBeLessThan(4)
    const listed = await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })
    expect((listed.json() as { documents: unknown[] }).documents).toEqual([])
    // the recognition running was held in the slot, and is stopped with it
    expect(lockedNow).not.toBe(0)
    await until(() => (alive(first!.pid) ? undefined : true), 10_000, 'tesseract to end')
    await until(() => (spawnSync('flock', ['--nonblock', join(slots, 'slot-0'), 'true']).status === 0 ? true : undefined), 10_000, 'the slot to be free')
    // and no other recognition started after the cancel
    const after = await recognitions(logged.log)
    expect(after.length).toBeLessThanOrEqual(end.pages.done + 1)
  }, 900_000)
})
