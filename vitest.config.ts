import { existsSync, readdirSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

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
