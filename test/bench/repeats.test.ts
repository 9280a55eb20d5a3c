import { describe, expect, it } from 'vitest'
import { spreadByPooledLength, summariseArms } from '../../bench/lib/repeats.js'

const cell = (clients: number, repeat: number, answers: number, answersPerS: number, serverMs: number, clientMs: number) => ({
  build: 'b', client: 'node', path: 'hybrid', clients, repeat, answers, answers_per_s: answersPerS,
  server_cpu_ms_per_answer: serverMs, client_cpu_ms_per_answer: clientMs
})

describe('repeated cells of the concurrency bench', () => {
  // Round 0: alone 2.5 + 0.5 = 3 ms (bound 2 cores ÷ 3 ms = 666.67/s), at 16 clients 600/s at 3.0 + 0.3 = 3.3 ms.
  // Round 1: alone 3.5 + 0.5 = 4 ms (bound 500/s), at 16 clients 450/s at 4.0 + 0.4 = 4.4 ms.
  const cells = [cell(1, 0, 100, 300, 2.5, 0.5), cell(16, 0, 600, 600, 3.0, 0.3), cell(1, 1, 100, 250, 3.5, 0.5), cell(16, 1, 450, 450, 4.0, 0.4)]

  it('makes each ratio to the bound from the 1-client cell of the same round', () => {
    const many = summariseArms(cells, 2).find((a) => a.clients === 16)!
    // 600 ÷ 666.67 = 0.9 and 450 ÷ 500 = 0.9; a bound from the other round would give 0.72 or 1.125.
    expect(many.ratio_to_bound).toEqual({ median: 0.9, min: 0.9, max: 0.9, relative_range: 0 })
    // 3 ÷ 3.3 = 0.909 and 4 ÷ 4.4 = 0.909.
    expect(many.cpu_alone_over_here).toMatchObject({ min: 0.909, max: 0.909 })
    expect(many.cpu_ms_per_answer).toEqual({ median: 3.85, min: 3.3, max: 4.4, relative_range: 0.286 })
    expect(many.repeats).toBe(2)
  })

  it('pools consecutive rounds by answers, not by averaging their figures', () => {
    const four = [cell(1, 0, 100, 0, 3, 0), cell(1, 1, 300, 0, 5, 0), cell(1, 2, 100, 0, 4, 0), cell(1, 3, 100, 0, 4, 0)]
    const [arm] = spreadByPooledLength(four, 4)
    // Pools of 1: 3, 5, 4, 4. Pools of 2: (300 + 1500) ÷ 400 = 4.5 and (400 + 400) ÷ 200 = 4; no pool of 4 (one alone says nothing).
    expect(arm!.pools.map((p) => [p.seconds, p.count, p.cpu_ms_per_answer.min, p.cpu_ms_per_answer.max])).toEqual([[4, 4, 3, 5], [8, 2, 4, 4.5]])
  })
})
