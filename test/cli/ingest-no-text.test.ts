/**
 * `npm run ingest` over files as they come (issue 39): a Markdown page with nothing to index (front matter, a script,
 * a component: docs-zh-cn's `src/api/index.md`) is reported `skipped` with the reason and not sent; a text with a
 * stray control character goes in, the report saying how many characters were removed; both over HTTP (a service,
 * `on_invalid: "skip"`) and --direct.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'

let dir: string
let folder: string
let t: TestApp
let url: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-no-text-'))
  folder = join(dir, 'docs')
  await mkdir(join(folder, 'api'), { recursive: true })
  await writeFile(join(folder, 'api/index.md'), '---\ntitle: API 参考\nsidebar: false\n---\n\n<script setup>\nimport ApiIndex from \'./ApiIndex.vue\'\n</script>\n\n<ApiIndex />\n')
  await writeFile(join(folder, 'api/application.md'), '# 应用实例 API\n\n## createApp()\n\n创建一个应用实例。\n')
  await writeFile(join(folder, 'title.txt'), '淋巴结肿大患者全胸片检查\u001a 问题：已经行ct检查\n')
  t = await buildTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
}, 300_000)
afterAll(async () => {
  await t?.close()
  await rm(dir, { recursive: true, force: true })
})

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

interface Report { files: Array<{ file: string; outcome: string; reason?: string; id?: string; normalised?: number; chunks?: number }>; counts: Record<string, number> }

const byName = (report: Report) => new Map(report.files.map((f) => [f.file.slice(f.file.indexOf('docs/') + 5), f]))

describe('ingest CLI: a file without text, a text with a control character', () => {
  it('over HTTP: skipped with the reason, normalised and counted; every file answered ingested is listed', async () => {
    const r = await cli(['--url', url, '--namespace', 'cli-http', '--json', folder])
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout) as Report
    expect(report.counts).toEqual({ ingested: 2, replaced: 0, unchanged: 0, skipped: 1, refused: 0 })
    const files = byName(report)
    expect(files.get('api/index.md')).toMatchObject({ outcome: 'skipped', reason: expect.stringMatching(/^no text to index/) })
    expect(files.get('title.txt')).toMatchObject({ outcome: 'ingested', id: 'title', normalised: 1, chunks: 1 })
    const listed = (await t.app.inject({ method: 'GET', url: '/documents?namespace=cli-http' })).json()
    expect(listed.documents.map((d: { id: string }) => d.id)).toEqual(['api-application', 'title'])
    const text = await cli(['--url', url, '--namespace', 'cli-http-text', folder])
    expect(text.stdout).toMatch(/^skipped +\S*api\/index\.md +\(no text to index: /m)
    expect(text.stdout).toMatch(/^ingested +\S*title\.txt +\(id title, 1 chunks, text, UTF-8, 1 control or invisible characters removed\)$/m)
  }, 300_000)

  it('--direct: the same report', async () => {
    const r = await cli(['--direct', '--json', folder], { DATA_DIR: join(dir, 'data') })
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout) as Report
    expect(report.counts).toEqual({ ingested: 2, replaced: 0, unchanged: 0, skipped: 1, refused: 0 })
    expect(byName(report).get('api/index.md')).toMatchObject({ outcome: 'skipped' })
  }, 300_000)
})
