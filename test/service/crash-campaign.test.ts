import { execFile } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { runCrashCampaign } from '../../scripts/crash/campaign.js'

// The crash campaign (docs/operations.md): 20 rounds of SIGKILL during a mixed ingest against the built service (`make crash`
// runs 200 by hand). Built as `npm run build` does, into a folder of its own.
const outDir = join('.cache', 'dist-crash')
afterAll(async () => { await rm(outDir, { recursive: true, force: true }) })

describe('the crash campaign', () => {
  it('20 rounds of SIGKILL during documents (REST, MCP, CLI), graph, Episode writes and deletes lose nothing acknowledged and leave nothing half-present', async () => {
    await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', outDir])
    const report = await runCrashCampaign({
      rounds: 20, seed: 2018, serverArgs: [join(outDir, 'src', 'http', 'server.js')], cliArgs: [join(outDir, 'src', 'cli', 'ingest.js')]
    })
    expect(report.problems).toEqual([])
    expect(report).toMatchObject({ rounds: 20, kills: 20, acknowledged_lost: 0, half_present: 0, failed_restarts: 0 })
    // the campaign did crash writes: some were acknowledged and some were cut off by a kill
    expect(report.acknowledged_writes).toBeGreaterThan(20)
    expect(report.in_flight_at_kill).toBeGreaterThan(0)
  }, 1_800_000)
})
