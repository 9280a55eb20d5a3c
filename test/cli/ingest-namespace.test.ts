/**
 * `npm run ingest -- --namespace NS PATH`: the CLI writes into the namespace it is given, directly into the
 * stores and over HTTP, and refuses a malformed one naming the option.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-'))
  await mkdir(join(dir, 'notes'))
  await writeFile(join(dir, 'notes', 'oncall.md'), '---\nid: oncall\n---\n# 值班说明\n\n夜间告警由二线值班处理。')
  await writeFile(join(dir, 'graph.json'), JSON.stringify({ entities: [{ id: 'li', name: '李四' }] }))
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

describe('ingest CLI --namespace', () => {
  it('--direct writes documents and graph files into the namespace, and nothing into default', async () => {
    const dataDir = join(dir, 'direct')
    const r = await cli(['--direct', '--namespace', 'tenant-x', join(dir, 'notes'), join(dir, 'graph.json')], { DATA_DIR: dataDir })
    expect(r.code, r.output).toBe(0)
    expect(r.output).toContain('namespace tenant-x')
    const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
    try {
      expect(services.documents.list('tenant-x').map((d) => d.id)).toEqual(['oncall'])
      expect(services.documents.list('default')).toEqual([])
      // the imported graph file's one entity (the note's derived entities sit beside it: test/corpus/derived-graph.test.ts)
      expect((await services.graph.names('tenant-x')).filter((n) => !n.derived).map((n) => n.id)).toEqual(['li'])
      expect(await services.graph.count('default')).toEqual({ entities: 0, relations: 0 })
    } finally {
      await services.close()
    }
  })

  it('over HTTP, sends the namespace with every request', async () => {
    let server: ServerProcess | undefined
    try {
      // counts of the imported graph only: no derived graph or Episodes here
      server = await startServer({ DATA_DIR: join(dir, 'http'), DEMO_DATA: 'false', DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' })
      const r = await cli(['--url', server.url, '--namespace', 'tenant-y', join(dir, 'notes'), join(dir, 'graph.json')], {})
      expect(r.code, r.output).toBe(0)
      const listed = await (await fetch(`${server.url}/namespaces`)).json() as { namespaces: unknown[] }
      expect(listed.namespaces).toEqual([{ namespace: 'tenant-y', documents: 1, chunks: 1, entities: 1, relations: 0, episodes: 0, images: 0 }])
    } finally {
      await server?.kill()
    }
  })

  it('refuses a malformed namespace, naming --namespace', async () => {
    const r = await cli(['--direct', '--namespace', 'Tenant X', join(dir, 'notes')], { DATA_DIR: join(dir, 'bad') })
    expect(r.code).toBe(1)
    expect(r.output).toContain('--namespace "Tenant X" does not match ^[a-z0-9][a-z0-9_-]{0,62}$')
  })
})
