import { expect } from 'vitest'
import type { ScenarioOutput } from '../../../adapters/episodic/scenario.js'

/** What a golden scenario declares under `expect`: some of the output's keys, each checked in full. */
export type ScenarioExpect = Partial<ScenarioOutput>

function expectClose(actual: Record<string, number> | undefined, expected: Record<string, number>, what: string): void {
  expect(Object.keys(actual ?? {}).sort(), what).toEqual(Object.keys(expected).sort())
  for (const [k, v] of Object.entries(expected)) expect(actual![k], `${what} ${k}`).toBeCloseTo(v, 9)
}

/** One check per output key; a key a scenario may declare is a key of this table. */
const CHECKS: { [K in keyof ScenarioOutput]-?: (out: ScenarioOutput, want: NonNullable<ScenarioOutput[K]>) => void } = {
  vector_limit: (out, want) => expect(out.vector_limit, 'vector_limit').toBe(want),
  normalised: (out, want) => {
    expect(Object.keys(out.normalised ?? {}).sort(), 'normalised collections').toEqual(Object.keys(want).sort())
    for (const [collection, list] of Object.entries(want)) {
      expect(out.normalised![collection]!.map((h) => h.id), `normalised ${collection}`).toEqual(list.map((h) => h.id))
      list.forEach((h, i) => expect(out.normalised![collection]![i]!.score, `${collection} ${h.id}`).toBeCloseTo(h.score, 9))
    }
  },
  best_by_id: (out, want) => expectClose(out.best_by_id, want, 'best_by_id'),
  edge_hit_map: (out, want) => expectClose(out.edge_hit_map, want, 'edge_hit_map'),
  bundles: (out, want) => {
    expect(out.bundles.map((b) => ({ ...b, score: 0 })), 'bundles').toEqual(want.map((b) => ({ ...b, score: 0 })))
    want.forEach((b, i) => expect(out.bundles[i]!.score, b.episode_id).toBeCloseTo(b.score, 9))
  },
  text: (out, want) => expect(out.text, 'text').toBe(want)
}

const SCENARIO_EXPECT_KEYS = Object.keys(CHECKS).sort()

/**
 * Checks every key `want` declares against `out`. Throws for an `expect` that is missing, not an object,
 * empty, or names a key the output does not have (a misspelt key would otherwise check nothing).
 */
export function checkScenario(out: ScenarioOutput, want: unknown): void {
  if (typeof want !== 'object' || want === null || Array.isArray(want)) {
    throw new Error(`scenario "expect" must be an object with some of: ${SCENARIO_EXPECT_KEYS.join(', ')}`)
  }
  const keys = Object.keys(want)
  if (keys.length === 0) throw new Error(`scenario "expect" is empty: declare some of ${SCENARIO_EXPECT_KEYS.join(', ')}`)
  const unknown = keys.filter((k) => !(k in CHECKS))
  if (unknown.length > 0) {
    throw new Error(`scenario "expect" has unknown key(s) ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${SCENARIO_EXPECT_KEYS.join(', ')}`)
  }
  for (const key of keys as Array<keyof ScenarioOutput>) {
    const value = (want as Record<string, unknown>)[key]
    if (value === undefined || value === null) throw new Error(`scenario "expect.${key}" is ${String(value)}`)
    ;(CHECKS[key] as (o: ScenarioOutput, w: unknown) => void)(out, value)
  }
}
