/**
 * The CLI checks a body as the route does: `npm run ingest -- --direct` refuses what `POST /ingest/...` refuses,
 * with the same message, naming the file rather than its place in a request; the other files are still written.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-check-'))
  await mkdir(join(dir, 'notes'))
  await writeFile(join(dir, 'notes', 'a.md'), '# 值班说明\n\n夜间告警由二线值班处理。')
  await writeFile(join(dir, 'notes', 'b.md'), '---\nid: "b b"\n---\n# 请假\n\n请假需提前申请。')
  // The HTTP schema takes facets as objects only; a string id used to pass the CLI and the demo loader.
  await writeFile(join(dir, 'episodes.json'), JSON.stringify({ episodes: [{ id: 'E1', name: '改造', summary: '摘要', facets: ['F1'] }] }))
})
afterAll(async () => rm(dir, { recursive: true, force: true }))

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', DEMO_DATA: 'false', ...env }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('close', (code) => resolve({ code, output }))
  })
}

describe('ingest CLI --direct checks bodies as the routes do', () => {
  it('refuses a document id the route refuses, naming the file, the field and the value, and writes the other file', async () => {
    const dataDir = join(dir, 'docs')
    const r = await cli(['--direct', join(dir, 'notes')], { DATA_DIR: dataDir })
    expect(r.code, r.output).toBe(3)
    expect(r.output).toMatch(/^refused +\S*notes\/b\.md +\(id must match pattern "\^\[\^#\\s\/\]\[\^#\\s\]\*\$" \(got "b b"\)\)$/m)
    expect(r.output).not.toContain('documents/1')
    const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
    try {
      expect(services.documents.list('default').map((d) => d.id)).toEqual(['a'])
    } finally {
      await services.close()
    }
  })

  it('refuses a facet given as a string id, with the message POST /ingest/episodes gives', async () => {
    const r = await cli(['--direct', join(dir, 'episodes.json')], { DATA_DIR: join(dir, 'episodes') })
    expect(r.code, r.output).toBe(3)
    expect(r.output).toMatch(/^refused +\S*episodes\.json +\(.*body\/episodes\/0\/facets\/0 must be object \(got "F1"\)\)$/m)
  })
})
