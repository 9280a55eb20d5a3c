/**
 * A server and `npm run ingest -- --direct` on one DATA_DIR would each hold the embedded stores and miss the other's
 * writes: the direct ingest refuses a DATA_DIR a running server holds, naming it; once the server is gone (killed
 * without closing) the DATA_DIR is free at once on this host.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

let dir: string
let server: ServerProcess | undefined
afterAll(async () => {
  await server?.kill('SIGKILL')
  if (dir) await rm(dir, { recursive: true, force: true })
})

function ingestDirect(dataDir: string, file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', '--direct', file], {
      env: { ...process.env, LOG_LEVEL: 'silent', DEMO_DATA: 'false', DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('close', (code) => resolve({ code, output }))
  })
}

describe('ingest --direct on the DATA_DIR of a running server', () => {
  it('is refused while the server runs, naming it; goes in once the server is gone', async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-datadir-'))
    const dataDir = join(dir, 'data')
    const note = join(dir, 'note.md')
    await writeFile(note, '---\nid: direct-note\n---\n# 备忘\n\n命令行直接写入的段落。')
    // a lease of ten minutes: only the server's pid being gone can free the DATA_DIR within this test
    server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'false', SOLE_WRITER_LEASE_MS: '600000' })

    const refused = await ingestDirect(dataDir, note)
    expect(refused.code, refused.output).toBe(1)
    expect(refused.output).toContain(`pid ${server.child.pid}`)
    expect(refused.output).toContain(`DATA_DIR ${dataDir}`)
    const listed = await (await fetch(`${server.url}/documents`)).json() as { documents: unknown[] }
    expect(listed.documents).toEqual([])

    await server.kill('SIGKILL')
    const accepted = await ingestDirect(dataDir, note)
    expect(accepted.code, accepted.output).toBe(0)
    const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
    try {
      expect(services.documents.list('default').map((d) => d.id)).toEqual(['direct-note'])
    } finally {
      await services.close()
    }
  }, 240_000)
})
