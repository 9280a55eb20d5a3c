/**
 * Adding a mode is one folder and one registry line (docs/development.md, "Adding a mode"). A copy of the service gets a fourth, toy
 * mode (`echo`, test/fixtures/add-a-mode/echo/) as adapters/echo/ plus its import and its entry in
 * MODE_DEFINITIONS, and nothing else; the copy must type-check and serve the mode: GET and POST /retrieve,
 * its option refused for another mode, its name in the served OpenAPI document.
 */
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

const ROOT = resolve('.')
const REGISTRY_LINE = /^export const MODE_DEFINITIONS = \[(.*)\] as const$/m

/** The registry with the echo mode added: its import after the first import, its definition last in MODE_DEFINITIONS. */
function withEchoMode(registry: string): string {
  if (!REGISTRY_LINE.test(registry)) throw new Error('src/modes.ts has no one-line MODE_DEFINITIONS')
  return registry
    .replace(/^import /m, "import { echoMode } from '../adapters/echo/index.js'\nimport ")
    .replace(REGISTRY_LINE, (_, list: string) => `export const MODE_DEFINITIONS = [${list}, echoMode] as const`)
}

describe('a fourth mode from one folder and one registry line', () => {
  let dir: string
  let server: ServerProcess | undefined

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-add-a-mode-'))
    await cp(join(ROOT, 'src'), join(dir, 'src'), { recursive: true })
    await cp(join(ROOT, 'adapters'), join(dir, 'adapters'), { recursive: true })
    await cp(join(ROOT, 'package.json'), join(dir, 'package.json'))
    await cp(join(ROOT, 'clients'), join(dir, 'clients'), { recursive: true })
    for (const shared of ['node_modules', 'demo']) await symlink(join(ROOT, shared), join(dir, shared))
    const tsconfig = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8')) as Record<string, unknown>
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ ...tsconfig, include: ['src', 'adapters', 'clients'], exclude: [] }))
    await mkdir(join(dir, 'adapters', 'echo'))
    await cp(join(ROOT, 'test/fixtures/add-a-mode/echo/index.ts'), join(dir, 'adapters/echo/index.ts'))
    const registry = await readFile(join(ROOT, 'src/modes.ts'), 'utf8')
    await writeFile(join(dir, 'src/modes.ts'), withEchoMode(registry))
  }, 60_000)

  afterAll(async () => {
    await server?.kill('SIGKILL')
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('the registry changes by exactly the import and the MODE_DEFINITIONS entry', async () => {
    const before = (await readFile(join(ROOT, 'src/modes.ts'), 'utf8')).split('\n')
    const after = (await readFile(join(dir, 'src/modes.ts'), 'utf8')).split('\n')
    expect(after.length).toBe(before.length + 1)
    const changed = after.filter((line) => !before.includes(line))
    expect(changed).toEqual([
      "import { echoMode } from '../adapters/echo/index.js'",
      expect.stringMatching(/^export const MODE_DEFINITIONS = \[hybridMode, graphragMode, episodicMode, echoMode\] as const$/)
    ])
  })

  it('the copy type-checks with the mode in it (ModeTable, createModes and the schemas follow the registry)', async () => {
    const tsc = join(ROOT, 'node_modules/.bin/tsc')
    const run = await promisify(execFile)(tsc, ['-p', 'tsconfig.json', '--noEmit'], { cwd: dir }).then(
      () => ({ ok: true, out: '' }),
      (e: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` })
    )
    expect(run.out).toBe('')
    expect(run.ok).toBe(true)
  }, 600_000)

  it('the copy serves the mode', async () => {
    server = await startServer(
      { DATA_DIR: join(dir, 'data'), DEMO_DATA: 'false', MODEL_DIR: resolve(process.env.MODEL_DIR ?? 'models') },
      { args: ['--import', 'tsx', join(dir, 'src/http/server.ts')], timeoutMs: 240_000 }
    )
    const got = await fetch(`${server.url}/retrieve?mode=echo&q=${encodeURIComponent('咳嗽')}&top_k=1`)
    expect(got.status).toBe(200)
    const body = await got.json() as { mode: string; recall_bundle: unknown[]; legs: { name: string; status: string }[] }
    expect(body.mode).toBe('echo')
    expect(body.recall_bundle).toEqual([{
      id: 'echo-1', text: '咳嗽', score: 1, source: 'echo', mode: 'echo', metadata: { rank: 1, score_kind: 'echo', echo_chunks: 0 }
    }])
    expect(body.legs.map((l) => [l.name, l.status])).toEqual([['count', 'ok']])

    const post = await fetch(`${server.url}/retrieve`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'echo', query: 'cough', shout: true })
    })
    expect(post.status).toBe(200)
    expect(((await post.json()) as { recall_bundle: { text: string }[] }).recall_bundle[0]!.text).toBe('COUGH')

    // The echo option belongs to echo: with another mode it is a 400 that names it.
    const misplaced = await fetch(`${server.url}/retrieve`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'hybrid', query: 'cough', shout: true })
    })
    expect(misplaced.status).toBe(400)
    expect(((await misplaced.json()) as { message: string }).message).toContain('shout')

    const document = await (await fetch(`${server.url}/openapi.json`)).text()
    expect(document).toContain('"echo"')
    expect(document).toContain('echo: chunks in the namespace when it answered.')
  }, 300_000)
})
