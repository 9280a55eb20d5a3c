/**
 * A fresh install on the project's Node is quiet (issue 43): `npm ci` in a copy of package.json, the lockfile and
 * .npmrc succeeds with no warning at all (no EBADENGINE, no deprecated package, no unknown config, no install script
 * left unreviewed), and the native addons it brings load on the Node running this suite.
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'recall-install-'))
let log = ''

beforeAll(async () => {
  for (const f of ['package.json', 'package-lock.json', '.npmrc']) cpSync(f, join(dir, f))
  // The npm on PATH runs on the first `node` there: vitest.config.ts puts the suite's own Node first.
  const { stdout, stderr } = await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'warn'], {
    cwd: dir, timeout: 600_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CI: 'true', npm_config_loglevel: 'warn' }
  })
  log = stdout + stderr
}, 660_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('npm ci on a fresh copy', () => {
  it('says nothing but what it added', () => {
    expect(log).not.toMatch(/EBADENGINE|deprecated|npm warn|npm WARN|npm error/i)
    expect(log.trim().split('\n').filter((l) => l.trim() !== '')).toEqual([expect.stringMatching(/^added \d+ packages in /)])
  })

  it('installs exactly the versions the lockfile names, which package.json pins', () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version: string }> }
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> }
    for (const [name, wanted] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
      expect(wanted, name).toMatch(/^\d+\.\d+\.\d+$/)
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(wanted)
      const installed = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
      expect(installed.version, name).toBe(wanted)
    }
  })

  it('brings native addons that load on this Node', async () => {
    const script = [
      "const ort = require('onnxruntime-node'); if (typeof ort.InferenceSession?.create !== 'function') throw new Error('onnxruntime-node')",
      "const { Jieba } = require('@node-rs/jieba'); if (new Jieba().cut('值班说明', false).join('|') === '') throw new Error('@node-rs/jieba')",
      "require('sharp')",
      'console.log(process.versions.node)'
    ].join('\n')
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: dir })
    expect(stdout.trim()).toBe(process.versions.node)
  })
})
