/**
 * `npm run ingest -- --direct --json FOLDER` over a folder of scans and pictures (test/fixtures/ocr/make.sh: pages
 * rendered by poppler, wrapped by img2pdf, written by ImageMagick): the scanned PDF, the PDF with one page of text and
 * one picture, and the PNG go in by OCR with their pages named in the report; the image bomb and the truncated PNG
 * are refused with their reasons, and the text PDF beside them is still written.
 */
import { spawn, spawnSync } from 'node:child_process'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'

const OCR = join(import.meta.dirname, '../fixtures/ocr')
const FILES = join(import.meta.dirname, '../fixtures/files')
const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasOcr = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && spawnSync('pdftoppm', ['-v']).status === 0
if (!hasOcr) console.warn('cli/ingest-ocr.test.ts skipped: no tesseract with chi_sim, or no pdftoppm (scripts/setup.sh installs them)')

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-ocr-'))
  for (const f of ['handbook-scanned.pdf', 'manual-mixed.pdf', 'handbook-p1.png', 'bomb.png', 'truncated.png']) await copyFile(join(OCR, f), join(dir, f))
  await copyFile(join(FILES, 'manual.pdf'), join(dir, 'manual.pdf'))
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

type FileLine = { file: string; outcome: string; reason?: string; id?: string; pages?: number; ocr?: { pages: number[]; confidence: number; low_confidence_pages: number[]; failed_pages: unknown[] } }

describe.skipIf(!hasOcr)('ingest CLI over scans and pictures', () => {
  it('writes the scans by OCR, names their OCR pages, refuses the bomb and the truncated image, still writes the rest; exits 3', async () => {
    const dataDir = join(dir, 'data')
    const r = await cli(['--direct', '--json', dir], { DATA_DIR: dataDir, OCR_CONCURRENCY: '2' })
    expect(r.code, r.stderr).toBe(3)
    const report = JSON.parse(r.stdout) as { files: FileLine[]; counts: Record<string, number> }
    const byName = new Map(report.files.map((f) => [f.file.slice(f.file.lastIndexOf('/') + 1), f]))
    expect(report.counts).toEqual({ ingested: 4, replaced: 0, unchanged: 0, skipped: 0, refused: 2 })
    expect(byName.get('bomb.png')).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/^9922x14032 pixels .*OCR_MAX_IMAGE_PIXELS/) })
    expect(byName.get('truncated.png')).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/^the image cannot be decoded/) })
    expect(byName.get('handbook-scanned.pdf')).toMatchObject({ outcome: 'ingested', pages: 4, ocr: { pages: [1, 2, 3, 4], low_confidence_pages: [], failed_pages: [] } })
    expect(byName.get('manual-mixed.pdf')).toMatchObject({ outcome: 'ingested', pages: 2, ocr: { pages: [2], failed_pages: [] } })
    expect(byName.get('handbook-p1.png')).toMatchObject({ outcome: 'ingested', ocr: { pages: [1] } })
    expect(byName.get('manual.pdf')).toMatchObject({ outcome: 'ingested', pages: 2 })
    expect(byName.get('manual.pdf')!.ocr).toBeUndefined()

    const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
    try {
      const library = services.documents.get('default')!
      expect(library.chunk('handbook-scanned#0')!.metadata).toMatchObject({ format: 'pdf', pages: 4, ocr: true, ocr_pages: ['1-4'], ocr_page_count: 4 })
      expect(library.chunk('handbook-p1#0')!.metadata).toMatchObject({ format: 'png', ocr: true, ocr_pages: ['1'] })
      expect([...library.storedChunks('handbook-scanned').values()].join('').replace(/\s+/g, '')).toContain('按下电源键后')
    } finally {
      await services.close()
    }
  }, 300_000)
})
