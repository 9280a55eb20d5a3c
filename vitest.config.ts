import { existsSync, readdirSync } from 'node:fs'
import { delimiter, dirname, resolve } from 'node:path'
import { defineConfig } from 'vitest/config'

// Tests spawn `node`, `npm` and `node_modules/.bin/*` by name. When the suite runs on the Node scripts/setup.sh
// installed beside an older one (.cache/node/), what they spawn runs on it too, whoever started vitest.
const projectNodeBin = resolve('.cache/node/bin')
if (dirname(process.execPath) === projectNodeBin) process.env.PATH = `${projectNodeBin}${delimiter}${process.env.PATH ?? ''}`

// Every module in test/setup/ starts one real backend (Neo4j, Redis) for the whole run.
const globalSetup = existsSync('test/setup')
  ? readdirSync('test/setup').filter((f) => f.endsWith('.ts')).sort().map((f) => `test/setup/${f}`)
  : []

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default', 'json'],
    outputFile: { json: '.cache/vitest-report.json' }
  }
})
