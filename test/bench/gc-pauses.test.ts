import { describe, expect, it } from 'vitest'
import { pauseSummary, pausesByKind } from '../../bench/lib/gc-pauses.js'

const pause = (ms: number, kind = 'minor') => ({ at_ms: 0, ms, kind })

describe('garbage-collection pause summaries of the follower bench', () => {
  it('takes nearest-rank percentiles, the sum and the long ones', () => {
    // sorted 1, 2, 5, 20, 60: p50 is the 3rd (ceil(2.5)), p99 the 5th (ceil(4.95)); sum 88; over 10 ms: 20 and 60; over 50: 60
    expect(pauseSummary([pause(5), pause(60), pause(1), pause(20), pause(2)]))
      .toEqual({ count: 5, p50_ms: 5, p99_ms: 60, max_ms: 60, sum_ms: 88, over_10_ms: 2, over_50_ms: 1 })
  })

  it('answers zeros for no pause', () => {
    expect(pauseSummary([])).toEqual({ count: 0, p50_ms: 0, p99_ms: 0, max_ms: 0, sum_ms: 0, over_10_ms: 0, over_50_ms: 0 })
  })

  it('splits by kind beside the whole', () => {
    const split = pausesByKind([pause(1), pause(30, 'major'), pause(3), pause(2)])
    // minor 1, 2, 3: p50 the 2nd (ceil(1.5)); major 30 alone
    expect(Object.keys(split)).toEqual(['all', 'major', 'minor'])
    expect(split.minor).toMatchObject({ count: 3, p50_ms: 2, max_ms: 3, sum_ms: 6 })
    expect(split.major).toMatchObject({ count: 1, p50_ms: 30, p99_ms: 30 })
    expect(split.all).toMatchObject({ count: 4, p50_ms: 2, max_ms: 30, sum_ms: 36 })
  })
})
