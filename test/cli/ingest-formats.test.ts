/**
 * `npm run ingest -- --direct --json FOLDER` over a folder as people have them: Markdown, text, HTML, PDF and DOCX in
 * UTF-8, GBK, Big5 and UTF-16, an empty file, a whitespace-only one, a binary renamed .md and a text over the size
 * limit. Every good file goes in with its title, format and encoding; every bad one is in the report with its reason;
 * the run exits 3 because files were refused.
 */
import { spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { buildApp } from '../../src/http/app.js'
import { openServices } from '../../src/services.js'
import { createRuntime } from '../../src/runtime.js'

const FILES = join(import.meta.dirname, '../fixtures/files')
const GOOD = ['manual.pdf', 'handbook.pdf', 'policy.docx', 'page.html', 'notes-gbk.txt', 'notes-big5.txt', 'notes-utf16le-bom.md', 'notes-utf16be.txt']
const BAD = ['binary.md', 'empty.md', 'blank.txt']

let dir: string
let folder: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-formats-'))
  folder = join(dir, 'docs')
  await mkdir(join(folder, 'sub'), { recursive: true })
  for (const f of [...GOOD, ...BAD]) await copyFile(join(FILES, f), join(folder, f === 'policy.docx' ? 'sub/policy.docx' : f))
  // one character over the 1,000,000 a document may hold
  await writeFile(join(folder, 'huge.txt'), '文'.repeat(1_000_001))
})
afterAll(async () => rm(dir, { recursive: true, force: true }))

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', DEMO_DATA: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

interface Report { files: Array<{ file: string; outcome: string; reason?: string; id?: string; format?: string; encoding?: string; pages?: number }>; counts: Record<string, number> }

describe('ingest CLI over a mixed folder', () => {
  it('ingests every good file, reports every file with its outcome and reason, exits 3; a re-run finds every good file unchanged', async () => {
    const dataDir = join(dir, 'data')
    const r = await cli(['--direct', '--json', folder], { DATA_DIR: dataDir })
    expect(r.code, r.stderr).toBe(3)
    const report = JSON.parse(r.stdout) as Report
    const byName = new Map(report.files.map((f) => [f.file.slice(f.file.lastIndexOf('/') + 1), f]))
    expect([...byName.keys()].sort()).toEqual([...GOOD, ...BAD, 'huge.txt'].sort())
    expect(report.counts).toEqual({ ingested: 8, replaced: 0, unchanged: 0, skipped: 2, refused: 2 })
    expect(byName.get('binary.md')).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/^binary data: /) })
    expect(byName.get('empty.md')).toMatchObject({ outcome: 'skipped', reason: 'empty file (0 bytes)' })
    expect(byName.get('blank.txt')).toMatchObject({ outcome: 'skipped' })
    expect(byName.get('huge.txt')).toMatchObject({
      outcome: 'refused', reason: '1,000,001 characters of text, over the 1,000,000 one document may hold (MAX_DOCUMENT_CHARS); split the file'
    })
    expect(byName.get('notes-gbk.txt')).toMatchObject({ outcome: 'ingested', id: 'notes-gbk', format: 'text', encoding: 'GB18030' })
    expect(byName.get('manual.pdf')).toMatchObject({ outcome: 'ingested', id: 'manual', format: 'pdf', pages: 2 })
    expect(byName.get('policy.docx')).toMatchObject({ outcome: 'ingested', id: 'sub-policy', format: 'docx' })

    const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' })
    const services = await openServices(config)
    // closing the app closes the services
    const app = await buildApp(createRuntime(services), { logger: false })
    try {
      const docs = services.documents.list('default')
      expect(docs.map((d) => d.id)).toEqual(['handbook', 'manual', 'notes-big5', 'notes-gbk', 'notes-utf16be', 'notes-utf16le-bom', 'page', 'sub-policy'])
      // a .txt file is plain text (docs/formats.md, "Plain text"): its first line `# 机房值班记录` stays text, and is its title without the `#`
      expect(Object.fromEntries(docs.map((d) => [d.id, d.title]))).toEqual({
        handbook: '激光打印机用户手册', manual: '设备维护手册', 'notes-big5': '圖書館借閱規則', 'notes-gbk': '机房值班记录', 'notes-utf16be': '机房值班记录',
        'notes-utf16le-bom': '会议室预订', page: '计算属性', 'sub-policy': '差旅报销制度'
      })
      const library = services.documents.get('default')!
      expect(library.chunk('manual#0')!.metadata).toEqual({ format: 'pdf', pages: 2 })
      expect(library.chunk('notes-utf16be#0')!.metadata).toEqual({ format: 'text', encoding: 'UTF-16BE' })
      expect([...library.storedChunks('notes-gbk').values()].join('\n')).toContain('夜班值班员每两小时巡检一次机柜温度')

      // questions about the PDF and the DOCX find their page and their section
      await app.ready()
      const top = async (query: string) => {
        const r = await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query, top_k: 3 } })
        return (r.json() as { recall_bundle: Array<{ id: string; text: string; metadata: { page?: number; page_end?: number; heading_path?: string[] } }> }).recall_bundle[0]!
      }
      const squeeze = (t: string) => t.replace(/\s+/g, '')
      // the PDF's outline names its sections: the answer's section is a chunk of its own, on the page poppler finds it on
      const paper = await top('打印机卡纸了怎么处理')
      expect(paper.id).toBe('manual#1')
      expect(paper.metadata.heading_path).toEqual(['设备维护手册', '故障处理'])
      const popplerPages = (await readFile(join(FILES, 'manual.pdftotext.txt'), 'utf8')).split('\f')
      const answerPage = popplerPages.findIndex((p) => squeeze(p).includes('打印机卡纸时先关闭电源')) + 1
      expect(answerPage).toBe(2)
      expect([paper.metadata.page, paper.metadata.page_end]).toEqual([answerPage, undefined])
      // the four-page PDF: the page that holds the answer, as `pdftotext -f N -l N` reads each page, is among the
      // pages of the chunk found
      const pages = await Promise.all([1, 2, 3, 4].map(async (n) => squeeze(await readFile(join(FILES, `handbook.page-${n}.txt`), 'utf8'))))
      for (const [question, answer] of [['打印机的固定IP地址是多少', '192.168.7.20'], ['整机保修多长时间', '三十六个月'], ['一支硒鼓大约可以打印多少页', '约六千页'], ['按下电源键后自检过程大约需要多久', '大约需要九十秒']]) {
        const found = await top(question!)
        expect(found.id.startsWith('handbook#'), question).toBe(true)
        expect(squeeze(found.text), question).toContain(answer)
        const onPage = pages.findIndex((p) => p.includes(answer!)) + 1
        expect(onPage, answer).toBeGreaterThan(0)
        expect(found.metadata.page, question).toBeLessThanOrEqual(onPage)
        expect(found.metadata.page_end ?? found.metadata.page, question).toBeGreaterThanOrEqual(onPage)
      }
      const hotel = await top('出差住宿每晚最多报销多少钱')
      expect(hotel.id).toBe('sub-policy#1')
      expect(hotel.text.startsWith('## 报销标准')).toBe(true)
    } finally {
      await app.close()
    }

    const again = await cli(['--direct', folder], { DATA_DIR: dataDir })
    expect(again.code, again.stderr).toBe(3)
    // nothing changed: every good file is unchanged (neither embedded nor written again)
    // one chunk per section of its outline (two)
    expect(again.stdout).toMatch(/^unchanged +\S*manual\.pdf +\(id manual, 2 chunks, pdf, 2 pages\)$/m)
    expect(again.stdout).toMatch(/^refused +\S*binary\.md +\(binary data: /m)
    expect(again.stdout).toContain('0 ingested, 0 replaced, 8 unchanged, 2 skipped, 2 refused')
  }, 600_000)
})
