/**
 * `POST /ingest/files`: files sent as a multipart form are read by the CLI's readers (scans by OCR) and written as an
 * ingest job whose view counts files and pages. The files are real (test/fixtures/ocr/make.sh: LibreOffice, poppler,
 * img2pdf, ImageMagick); a corrupt PDF is a real one cut short, as make.sh cuts truncated.png. What a question must
 * find comes from poppler's text layer of the pages the scan was made from (test/fixtures/files/handbook.page-N.txt).
 */
import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { formBody } from '../../helpers/multipart.js'
import { QDRANT_SKIP_LINE } from '../../helpers/qdrant-server.js'

const OCR = join(import.meta.dirname, '../../fixtures/ocr')
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasOcr = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && spawnSync('pdftoppm', ['-v']).status === 0
if (!hasOcr) console.warn('http/routes/ingest-files.test.ts: the OCR cases skipped (no tesseract with chi_sim, or no pdftoppm; scripts/setup.sh installs them)')
const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`ingest-files (qdrant+neo4j+redis): ${QDRANT_SKIP_LINE}`)

const backends = [
  { name: 'embedded', skip: false, env: (): Record<string, string> => ({}) },
  {
    name: 'qdrant+neo4j+redis', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `upl_${randomBytes(3).toString('hex')}_`, VECTOR_TIMEOUT_MS: '30000',
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '5000'
    })
  }
]

interface JobView {
  state: string; files: { done: number; total: number }; pages: { done: number; total: number }; reading?: { file: string; page?: number }
  documents: { done: number; total: number }; errors: string[]; file_errors: Array<{ file: string; page?: number; reason: string }>
  result?: { documents: number; generation?: number }
}

/** Polls the job through its status URL until it ends; every view seen while it ran. */
async function untilEnded(t: TestApp, url: string): Promise<{ end: JobView; seen: JobView[] }> {
  const seen: JobView[] = []
  for (;;) {
    const res = await t.app.inject({ method: 'GET', url })
    expect(res.statusCode, res.body).toBe(200)
    const view = res.json() as JobView
    if (view.state !== 'running') return { end: view, seen }
    seen.push(view)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

for (const { name, skip, env } of backends) describe.skipIf(skip || !hasOcr)(`POST /ingest/files (${name})`, () => {
  let t: TestApp
  let end: JobView
  let seen: JobView[]
  const namespace = `upload-${randomBytes(3).toString('hex')}`
  const png = join(OCR, 'handbook-p1.png')

  beforeAll(async () => {
    t = await buildTestApp({ ...env(), OCR_CONCURRENCY: '1', EMBEDDING_TIMEOUT_MS: '60000' })
    const pdf = await readFile(join(OCR, 'manual-mixed.pdf'))
    const body = await formBody([
      { name: 'scans/handbook-scanned.pdf', bytes: await readFile(join(OCR, 'handbook-scanned.pdf')) },
      { name: 'scans/handbook-p1.png', bytes: await readFile(png) },
      { name: 'scans/truncated.png', bytes: await readFile(join(OCR, 'truncated.png')) },
      { name: 'scans/cut.pdf', bytes: pdf.subarray(0, 3000) }
    ], { namespace })
    const res = await t.app.inject({ method: 'POST', url: '/ingest/files', ...body })
    expect(res.statusCode, res.body).toBe(202)
    expect(res.headers.location).toBe(res.json().status_url)
    expect(res.json()).toMatchObject({ namespace, state: 'running', files: { done: 0, total: 4 } })
    ;({ end, seen } = await untilEnded(t, res.json().status_url))
  }, 600_000)
  afterAll(async () => t?.close())

  it('reads every file, counting the 6 pages OCR tried (4 of the scan, the picture, the truncated picture that failed), and writes the two readable ones', () => {
    expect(end, JSON.stringify(end)).toMatchObject({ state: 'done', files: { done: 4, total: 4 }, pages: { done: 6, total: 6 }, documents: { done: 2, total: 2 } })
    expect(end.result?.documents).toBe(2)
    expect(end.reading).toBeUndefined()
    // while it ran, the view said which file and page it was on
    const pageViews = seen.filter((v) => v.reading?.page !== undefined)
    for (const v of pageViews) expect(v.pages.done).toBeLessThanOrEqual(v.pages.total)
  })

  it('names the corrupt files and why in file_errors and errors; the others are written', () => {
    expect(end.file_errors).toEqual([
      { file: 'scans/truncated.png', reason: expect.stringMatching(/^refused: cannot be read|^refused: the image cannot be decoded/) },
      { file: 'scans/cut.pdf', reason: expect.stringMatching(/^refused: not a readable PDF/) }
    ])
    expect(end.errors).toEqual([expect.stringMatching(/^scans\/truncated\.png: refused: /), expect.stringMatching(/^scans\/cut\.pdf: refused: not a readable PDF/)])
  })

  it('/retrieve finds the scanned page by what is written on it', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query: 'TK-4150 硒鼓能打印多少页', top_k: 3, min_generation: end.result?.generation } })
    expect(res.statusCode, res.body).toBe(200)
    const [first] = res.json().recall_bundle
    expect(first).toMatchObject({ source: 'scans/handbook-scanned.pdf' })
    expect(first.text).toContain('TK-4150')
    expect(first.id.startsWith('scans-handbook-scanned#')).toBe(true)
  })

  it('the image file is a document and its own image record, which image_items answers and GET /images/{id} serves', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query: '打印机开机自检需要多长时间', top_k: 3, include_images: true } })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.recall_bundle.map((i: { source: string }) => i.source)).toContain('scans/handbook-p1.png')
    const bytes = await readFile(png)
    const item = body.image_items.find((i: { document: string }) => i.document === 'scans-handbook-p1')
    expect(item, JSON.stringify(body.image_items)).toMatchObject({ id: `scans-handbook-p1#img-${sha(bytes).slice(0, 16)}` })
    expect(item.text).toContain('自检')
    const served = await t.app.inject({ method: 'GET', url: item.url })
    expect(served.statusCode).toBe(200)
    expect(served.headers['content-type']).toBe('image/png')
    expect(sha(served.rawPayload)).toBe(sha(bytes))
  })
})

describe('POST /ingest/files refusals (embedded)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ INGEST_FILE_MAX_BYTES: '100000', INGEST_FILES_MAX_BYTES: '150000', INGEST_FILES_MAX_COUNT: '3' })
  }, 120_000)
  afterAll(async () => t?.close())

  const post = async (files: Array<{ name: string; bytes: Uint8Array }>, fields: Record<string, string> = {}, url = '/ingest/files') =>
    t.app.inject({ method: 'POST', url, ...await formBody(files, fields) })
  const note = (n: number) => ({ name: `note-${n}.md`, bytes: Buffer.from(`# 笔记 ${n}\n\n夜间告警由二线值班处理。`) })
  const nothingWritten = async () => expect((await t.app.inject({ method: 'GET', url: '/documents' })).json().total).toBe(0)

  it('413 naming the file over INGEST_FILE_MAX_BYTES (handbook-p1.png, 145,660 bytes), nothing written', async () => {
    const res = await post([note(1), { name: 'big.png', bytes: await readFile(join(OCR, 'handbook-p1.png')) }])
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ code: 'RECALL_PAYLOAD_TOO_LARGE', message: 'file "big.png" is larger than 100000 bytes (INGEST_FILE_MAX_BYTES); nothing of this request was written' })
    await nothingWritten()
  })

  it('413 past INGEST_FILES_MAX_BYTES in all, and past INGEST_FILES_MAX_COUNT files', async () => {
    const twoColumns = await readFile(join(OCR, 'truncated.png')) // 72,830 bytes: each under the file limit, three over the sum
    const res = await post([{ name: 'a.png', bytes: twoColumns }, { name: 'b.png', bytes: twoColumns }, { name: 'c.png', bytes: twoColumns }])
    expect(res.statusCode).toBe(413)
    expect(res.json().message).toBe('the files of this request are larger than 150000 bytes in all (INGEST_FILES_MAX_BYTES), past "c.png"; nothing was written')
    const many = await post([note(1), note(2), note(3), note(4)])
    expect(many.statusCode).toBe(413)
    expect(many.json().message).toBe('more than 3 files (INGEST_FILES_MAX_COUNT); nothing was written')
    await nothingWritten()
  })

  it('400 for a malformed namespace, no file, an unknown field, two files of one path, or a JSON body', async () => {
    const bad = await post([note(1)], { namespace: 'Team A' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toMatch(/^body\/namespace must match pattern .* \(got "Team A"\)$/)
    expect((await post([], { namespace: 'a' })).json().message).toBe('no file in the form: send one or more parts of the field "files", each with a filename')
    expect((await post([note(1)], { wait: 'true' })).json().message).toBe('body/wait is not a field of this form (it takes "files" and "namespace")')
    expect((await post([note(1), note(1)])).json().message).toBe('two files named "note-1.md": each file of a request needs its own path')
    expect((await post([note(1)], {}, '/ingest/files?namespace=Bad!')).statusCode).toBe(400)
    const json = await t.app.inject({ method: 'POST', url: '/ingest/files', payload: { documents: [] } })
    expect(json.statusCode).toBe(400)
    expect(json.json().message).toMatch(/^the body must be a multipart\/form-data form/)
    await nothingWritten()
  })

  it('a Markdown file reads the picture sent beside it, never a file of the server', async () => {
    const md = Buffer.from('# 设置\n\n![窗口](pics/settings.png)\n\n![口令](../../../../etc/hostname)\n\n深色模式在显示设置里打开。')
    const res = await post([{ name: 'guide/setup.md', bytes: md }, { name: 'guide/pics/settings.png', bytes: await readFile(join(import.meta.dirname, '../../fixtures/images/settings.png')) }], { namespace: 'pics' })
    expect(res.statusCode, res.body).toBe(202)
    const { end } = await untilEnded(t, res.json().status_url)
    expect(end.state).toBe('done')
    expect(end.file_errors).toContainEqual({ file: 'guide/setup.md', reason: 'picture ../../../../etc/hostname not taken: not among the files sent with it' })
    const doc = await t.app.inject({ method: 'GET', url: '/documents/guide-setup?namespace=pics' })
    expect(doc.statusCode, doc.body).toBe(200)
  }, 120_000)
})
