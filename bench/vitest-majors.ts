/**
 * The test runner's majors side by side (issue 43, "dependencies current"): the same test files run by vitest 4 and by
 * the vitest this tree pins, each in its own tree on this Node, in the order base, this, this, base per round (drift on
 * a busy machine falls on both). Each run is a plain `vitest run <files>` with its global setup (Neo4j, Redis, Qdrant
 * and both clusters), so its wall time is what a developer waits for that part of the suite.
 * Writes bench/results/vitest-majors.json: every run's wall time, load and test counts, the median per arm, this ÷ base.
 *
 *   npx tsx bench/vitest-majors.ts [--files test/adapters] [--rounds 1] [--base .cache/vitest4-base] [--base-vitest 4.1.12]
 *
 * The base tree is this commit (`git archive HEAD`) with this lockfile installed (`npm ci`) and then vitest
 * `--base-vitest` over it (`npm install --no-save`), so only the runner differs; remade when the commit differs.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { SHARED_DIR } from './lib/reference-data.js'
import { median } from './lib/median.js'

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: 'test/adapters' }, rounds: { type: 'string', default: '1' },
    base: { type: 'string', default: '.cache/vitest4-base' }, 'base-vitest': { type: 'string', default: '4.1.12' }
  }
})

function ensureBase(dir: string, vitest: string): void {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  const stamp = join(dir, '.base-commit')
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === `${commit} vitest ${vitest}`) return
  console.error(`making the base tree at ${dir} (${commit}, vitest ${vitest})`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { stdio: 'inherit' })
  execFileSync('npm', ['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' })
  execFileSync('npm', ['install', '--no-save', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', `vitest@${vitest}`], { cwd: dir, stdio: 'inherit' })
  symlinkSync(realpathSync('models'), join(dir, 'models'))
  // the Neo4j classpath Maven resolved for this pom, so the base's setup does not ask Maven again
  if (existsSync('.cache/neo4j')) cpSync('.cache/neo4j', join(dir, '.cache/neo4j'), { recursive: true })
  writeFileSync(stamp, `${commit} vitest ${vitest}\n`)
}

interface Run { arm: string; vitest: string; seconds: number; load: number[]; passed: number; failed: number; skipped: number; files: number }

/** One `vitest run` of the files in `tree`; its counts come from the JSON report it writes. */
function runOnce(arm: string, tree: string, files: string[]): Promise<Run> {
  const report = join(tmpdir(), `vitest-majors-${process.pid}-${arm}.json`)
  const vitest = (JSON.parse(readFileSync(join(tree, 'node_modules/vitest/package.json'), 'utf8')) as { version: string }).version
  const load = loadavg().map((l) => Math.round(l * 100) / 100)
  const started = performance.now()
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(tree, 'node_modules/vitest/vitest.mjs'), 'run', ...files, `--outputFile.json=${report}`], {
      cwd: tree, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, RECALL_SHARED_DIR: SHARED_DIR }
    })
    child.on('error', fail)
    child.on('exit', () => {
      const seconds = Math.round((performance.now() - started) / 100) / 10
      try {
        const r = JSON.parse(readFileSync(report, 'utf8')) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number; testResults: unknown[] }
        rmSync(report, { force: true })
        done({ arm, vitest, seconds, load, passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + r.numTodoTests, files: r.testResults.length })
      } catch (error) {
        fail(new Error(`${arm}: vitest ${vitest} wrote no report (${String(error)})`))
      }
    })
  })
}


async function main(): Promise<void> {
  const base = resolve(values.base)
  ensureBase(base, values['base-vitest'])
  const files = values.files.split(',')
  const arms = [{ name: 'base', tree: base }, { name: 'this', tree: process.cwd() }]
  const runs: Run[] = []
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const arm of [arms[0]!, arms[1]!, arms[1]!, arms[0]!]) {
      const run = await runOnce(arm.name, arm.tree, files)
      console.error(JSON.stringify(run))
      runs.push(run)
    }
  }
  const seconds = (arm: string) => median(runs.filter((r) => r.arm === arm).map((r) => r.seconds))
  const output = {
    generated_by: 'bench/vitest-majors.ts', date: new Date().toISOString(), machine: '2 cores, 24 GiB, shared with other helpers running tests',
    base: readFileSync(join(base, '.base-commit'), 'utf8').trim(), files, order: 'per round: base, this, this, base', ratio: 'this ÷ base of the median wall seconds',
    median_seconds: { base: seconds('base'), this: seconds('this') }, ratio_this_over_base: Math.round((seconds('this') / seconds('base')) * 1000) / 1000, runs
  }
  writeFileSync('bench/results/vitest-majors.json', `${JSON.stringify(output, null, 2)}\n`)
  console.log(JSON.stringify({ median_seconds: output.median_seconds, ratio_this_over_base: output.ratio_this_over_base }))
}

main().catch((error: unknown) => { console.error(error); process.exit(1) })
