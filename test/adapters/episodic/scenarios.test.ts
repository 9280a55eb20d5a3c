import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { runScenario, type ScenarioInput, type ScenarioOutput } from '../../../adapters/episodic/scenario.js'
import { checkScenario, type ScenarioExpect } from './scenario-checks.js'

// Golden scenarios: the expected values are the spec's (section 14: A1–A9 and A19), and for the d*
// files (our deliberate differences) a hand derivation kept in each file's `derivation` field. The d6
// files give raw distances, so their derivations start from the normalisation itself.
const DIR = join(import.meta.dirname, 'scenarios')
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort()

const load = (file: string): ScenarioInput & { expect: ScenarioExpect } => JSON.parse(readFileSync(join(DIR, file), 'utf8'))

describe('episodic scenarios', () => {
  it('has every golden scenario', () => {
    const names = FILES.map((f) => f.split('-')[0])
    for (const id of ['a1', 'a2', 'a3a', 'a3b', 'a3c', 'a5', 'a6', 'a9', 'a19', 'd1', 'd2', 'd3', 'd4', 'd5a', 'd5b', 'd5c', 'd6a', 'd6b', 'd6c']) {
      expect(names).toContain(id)
    }
  })

  for (const file of FILES) {
    it(file.replace(/\.json$/, ''), async () => {
      const scenario = load(file)
      const out = await runScenario(scenario)
      checkScenario(out, scenario.expect)
    })
  }

  it('refuses an expect that is missing, empty or has a misspelt key, and fails on any declared key that differs', async () => {
    const scenario = load('d3-da-qian-tian.json')
    const out = await runScenario(scenario)
    expect(() => checkScenario(out, undefined)).toThrow(/must be an object/)
    expect(() => checkScenario(out, {})).toThrow(/"expect" is empty/)
    expect(() => checkScenario(out, { bundle: scenario.expect.bundles })).toThrow(/unknown key\(s\) "bundle"/)
    expect(() => checkScenario(out, { ...scenario.expect, vector_limt: 100 })).toThrow(/unknown key\(s\) "vector_limt"/)
    expect(() => checkScenario(out, { text: null })).toThrow(/"expect.text" is null/)
    // Each declared key is checked, not only the first: a wrong last key fails.
    expect(() => checkScenario(out, { ...scenario.expect, text: `${out.text}x` })).toThrow()
    expect(() => checkScenario(out, { ...scenario.expect, vector_limit: out.vector_limit + 1 })).toThrow()
    checkScenario(out, scenario.expect)
  })

  it('A1: E2 is projected through N1 but has no finite path, so it is absent', async () => {
    const out = await runScenario(load('a1-facet-tier1.json'))
    expect(out.bundles.map((b) => b.episode_id)).toEqual(['E1'])
  })

  it('A3c reaches E1 through phase 2 even at the smallest cap', async () => {
    // With max_relevant_ids 1 phase 2 may take 2 ids: P1 and its neighbour F1, which reaches E1.
    const out = await runScenario({ ...load('a3c-two-hop-projection.json'), config: { max_relevant_ids: 1 } })
    expect(out.bundles.map((b) => b.episode_id)).toEqual(['E1'])
  })

  it('a time query widens the vector limit to 200 and a plain one keeps 100', async () => {
    const base = load('a6-tier2.json')
    expect((await runScenario(base)).vector_limit).toBe(100)
    expect((await runScenario({ ...base, query: '上周的预算会议结论' })).vector_limit).toBe(200)
    // 'monsoon' contains 'soon' (conf 0.3), below the 0.4 gate: no widening.
    expect((await runScenario({ ...base, query: 'monsoon season plans' })).vector_limit).toBe(100)
  })

  it('an empty hit set gives no bundle and empty text', async () => {
    const out = await runScenario({ ...load('a6-tier2.json'), hits: {} })
    expect(out.bundles).toEqual([])
    expect(out.text).toBe('')
  })

  it('queries of punctuation, stop words or only a time still run', async () => {
    const base = load('a6-tier2.json')
    for (const query of ['？！。', 'the of and', '昨天', '?']) {
      const out = await runScenario({ ...base, query })
      expect(out.bundles[0]?.episode_id).toBe('E1')
    }
  })

  it('the CLI prints the same JSON', async () => {
    const file = join(DIR, 'a2-tier2-quoted-example.json')
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'episodic:scenario', '--', file], {
      cwd: join(import.meta.dirname, '../../..')
    })
    const printed = JSON.parse(stdout) as ScenarioOutput
    expect(printed).toEqual(await runScenario(load('a2-tier2-quoted-example.json')))
    expect(printed.bundles[0]?.best_path).toBe('facet')
  })
})
