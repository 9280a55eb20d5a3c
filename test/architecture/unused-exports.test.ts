/**
 * No export is unused: knip (knip.json) follows every import from the entry points (the server, the CLIs, scripts,
 * benches, tests and the two worker entries) and reports any export or exported type that no other file imports.
 * Its only exclusion is test/fixtures/, whose files break rules on purpose.
 */
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

describe('unused exports', () => {
  it('knip finds none', () => {
    const run = spawnSync(resolve('node_modules/.bin/knip'), ['--reporter', 'compact', '--no-progress'], { encoding: 'utf8', timeout: 300_000 })
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('')
    expect(run.status).toBe(0)
  }, 300_000)
})
