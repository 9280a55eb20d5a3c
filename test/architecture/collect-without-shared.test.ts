/**
 * A clone with no `../shared` collects every test file: a suite gated on Qdrant, the Qdrant cluster, the Redis Cluster
 * or a reference file builds nothing that needs it while vitest collects (a `describe` body runs then, also when the
 * suite is skipped), so it skips with its line instead of failing the file. `test/parity/chunk-without-index.test.ts`
 * once called `loadConfig({VECTOR_BACKEND: 'qdrant', QDRANT_URL: ''})` in such a body and failed there.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const CONFIG = 'test/architecture/collect-without-shared.config.ts'

interface Collected { ok: boolean; output: string; files: Set<string> }

/** `vitest list`, running each file, over every test file (or the fixture) with no shared folder, no Qdrant, not under CI. */
function collectWithoutShared(fixture = false): Collected {
  const dir = mkdtempSync(join(tmpdir(), 'recall-no-shared-'))
  try {
    const json = join(dir, 'list.json')
    const env: NodeJS.ProcessEnv = { ...process.env, RECALL_SHARED_DIR: join(dir, 'shared'), QDRANT_URL: '', CMRC_PATH: '', QDRANT_OPENAPI_PATH: '' }
    // under CI a missing reference file fails the run by design; this check is about the clone, which is not CI
    delete env.CI
    if (fixture) env.COLLECT_FIXTURE = '1'
    for (const name of ['REDIS_TEST_URL', 'REDIS_CLUSTER_TEST_URL', 'NEO4J_TEST_URI', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID', 'VITEST_MODE']) delete env[name]
    // vitest 5's `list` reads each file's syntax by default (`--staticParse`) and runs no describe body, which is what
    // this check is about: collect by running the files, as `vitest run` does
    const run = spawnSync(resolve('node_modules/.bin/vitest'), ['list', '--staticParse=false', '--config', CONFIG, `--json=${json}`], {
      env, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 240_000
    })
    const output = `${run.stdout}${run.stderr}`
    let files = new Set<string>()
    try {
      const listed = JSON.parse(readFileSync(json, 'utf8')) as Array<{ file: string }>
      files = new Set(listed.map((t) => t.file.slice(resolve('.').length + 1)))
    } catch { /* no list written: the run failed, and the output says why */ }
    return { ok: run.status === 0, output, files }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('a clone without the shared reference folder', () => {
  it('collects every test file without an error', () => {
    const { ok, output, files } = collectWithoutShared()
    expect(ok, output).toBe(true)
    // the ungated files list their tests; a run that collected nothing would pass the line above too
    expect(files.size).toBeGreaterThan(100)
    expect(files).toContain('test/architecture/collect-without-shared.test.ts')
  }, 300_000)

  it('the check fails on a file that needs Qdrant while it is collected', () => {
    const { ok, output } = collectWithoutShared(true)
    expect(ok).toBe(false)
    expect(output).toContain('VECTOR_BACKEND=qdrant needs QDRANT_URL')
  }, 300_000)
})
