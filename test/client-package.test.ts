/**
 * clients/typescript as a package: `npm pack` of it, installed by `npm install <tarball>` into a new project
 * outside the repository, imported by its name from a plain `node` script and used against a running recall.
 * The package is packed from a copy of its folder, so the test never writes into the worktree.
 */
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from './helpers/build.js'

const ROOT = resolve('.')
const CLIENT = join(ROOT, 'clients/typescript')

// npm reads npm_config_* from the environment: the variables of the npm that started vitest stay out.
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))

async function run(command: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  try {
    return await promisify(execFile)(command, args, { cwd, env: npmEnv, timeout: 60_000, maxBuffer: 16 << 20 })
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`)
  }
}

const DOCUMENTS = [
  { id: 'tb-screening', text: '# 结核筛查\n\n咳嗽三周以上应做胸部X光检查和痰涂片检查，以排除肺结核。' },
  { id: 'flu-care', text: '# 流感护理\n\n流感患者应多休息、多饮水，高热时可使用退热药。' },
  { id: 'bp-check', text: '# 血压测量\n\n测量血压前应静坐五分钟，袖带与心脏保持同一高度。' }
]
const QUERY = { mode: 'hybrid', namespace: 'pkg', query: '咳嗽三周以上要做什么检查', top_k: 2 } as const

/** A TypeScript user of the package: its types come from the tarball's declarations. */
const TYPED_USE = `
import { createRecallClient, type RetrieveResponse } from '@recall/client'
const recall = createRecallClient({ baseUrl: 'http://127.0.0.1:3000' })
export const ids = (answer: RetrieveResponse): string[] => answer.recall_bundle.map((item) => item.id)
export const misspelt = () =>
  // @ts-expect-error top_kk is no option of /retrieve
  recall.retrieve({ mode: 'hybrid', query: 'q', top_kk: 3 })
`
const TYPED_USE_CONFIG = {
  compilerOptions: {
    target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, skipLibCheck: true, noEmit: true
  },
  files: ['typed-use.ts']
}

/** What the script prints: each call's answer, or the error it threw, and where its imports resolved. */
const SCRIPT = `
import { createRecallClient, RecallError } from '@recall/client'
const [baseUrl, apiKey] = process.argv.slice(2)
const recall = createRecallClient({ baseUrl, apiKey })
const ingested = await recall.ingestDocuments({ namespace: 'pkg', documents: ${JSON.stringify(DOCUMENTS)} })
const retrieved = await recall.retrieve(${JSON.stringify(QUERY)})
const refused = await createRecallClient({ baseUrl }).ingestDocuments({ namespace: 'pkg', documents: [] }).catch((e) => e)
console.log(JSON.stringify({
  ingested, retrieved,
  refused: { isRecallError: refused instanceof RecallError, name: refused.name, status: refused.status, body: refused.body },
  resolved: { client: import.meta.resolve('@recall/client'), openapiFetch: import.meta.resolve('openapi-fetch') }
}))
`

describe('the client as an npm package', () => {
  let t: TestApp
  let base: string
  let tmp: string
  let app: string

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'recall-client-package-'))
    // The copy builds with the repository's tsc and openapi-fetch types; the new project sees neither.
    const build = join(tmp, 'build')
    await cp(CLIENT, join(build, 'client'), { recursive: true, filter: (from) => !/[/\\](dist|node_modules)$/.test(from) })
    await symlink(join(ROOT, 'node_modules'), join(build, 'node_modules'))
    app = join(tmp, 'app')
    await mkdir(app)
    // t is set as soon as the app is up, so that afterAll closes it even when packing fails.
    await Promise.all([
      buildTestApp({ API_KEYS: 'k-all' }).then((started) => { t = started }),
      (async () => {
        await run('npm', ['pack', '--pack-destination', tmp], join(build, 'client'))
        const [tarball] = (await readdir(tmp)).filter((f) => f.endsWith('.tgz'))
        await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'uses-recall', version: '1.0.0', private: true, type: 'module' }))
        await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(tmp, tarball!)], app)
        await writeFile(join(app, 'use-recall.mjs'), SCRIPT)
        await writeFile(join(app, 'typed-use.ts'), TYPED_USE)
        await writeFile(join(app, 'tsconfig.json'), JSON.stringify(TYPED_USE_CONFIG))
      })()
    ])
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
  }, 180_000)
  afterAll(async () => {
    await t?.close()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })

  it('installs from its tarball with openapi-fetch and works from plain node: the answers are the server\'s own', async () => {
    const { stdout } = await run(process.execPath, ['use-recall.mjs', base, 'k-all'], app)
    const out = JSON.parse(stdout) as {
      ingested: { documents: number; chunks: number; replaced: number }
      retrieved: { recall_bundle: { id: string; score: number }[] }
      refused: { isRecallError: boolean; name: string; status: number; body: { code: string } }
      resolved: { client: string; openapiFetch: string }
    }

    // Everything the script imports came from the new project's own node_modules, not from the repository.
    const installed = pathToFileURL(join(app, 'node_modules')).href + '/'
    expect(out.resolved.client).toBe(`${installed}@recall/client/dist/index.js`)
    expect(out.resolved.openapiFetch.startsWith(`${installed}openapi-fetch/`)).toBe(true)

    expect(out.ingested).toMatchObject({ documents: 3, replaced: 0 })
    expect(out.ingested.chunks).toBeGreaterThanOrEqual(3)
    expect(t.app.services.documents.list('pkg').map((d) => d.id).sort()).toEqual(DOCUMENTS.map((d) => d.id).sort())

    const direct = await fetch(`${base}/retrieve`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k-all' }, body: JSON.stringify(QUERY)
    })
    const answer = await direct.json() as { recall_bundle: { id: string; score: number }[] }
    expect(direct.status).toBe(200)
    const ranked = (bundle: { id: string; score: number }[]) => bundle.map(({ id, score }) => ({ id, score }))
    expect(ranked(out.retrieved.recall_bundle)).toEqual(ranked(answer.recall_bundle))
    expect(out.retrieved.recall_bundle[0]!.id.startsWith('tb-screening#')).toBe(true)

    const unauthorised = await fetch(`${base}/ingest/documents`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ namespace: 'pkg', documents: [] })
    })
    expect(out.refused).toEqual({ isRecallError: true, name: 'RecallError', status: unauthorised.status, body: await unauthorised.json() })
    expect(out.refused.status).toBe(401)
    expect(out.refused.body.code).toBe('RECALL_AUTH_REQUIRED')
  })

  it('ships its type declarations: a TypeScript project type-checks against them, and a misspelt option is an error', async () => {
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app)
  })
})
