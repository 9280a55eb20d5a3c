import { describe, expect, it } from 'vitest'
import { parseQueryTime } from '../../../adapters/episodic/time-parse.js'

// Spec section 9.1, worked parses (now = 2026-04-22T12:00Z, read at UTC+8), plus difference 3.
const NOW = Date.parse('2026-04-22T12:00:00Z')
const day = (d: string): number => Date.parse(`${d}T00:00:00Z`)
type Row = [query: string, start: string, end: string, conf: number, rest: string | null]
const PARSES: Row[] = [
  ['昨天的会', '2026-04-21', '2026-04-22', 0.9, '的会'],
  ['上周五和这周一', '2026-04-17', '2026-04-21', 0.9, '和'],
  ['年底冲刺', '2026-11-01', '2027-01-01', 0.6, '冲刺'],
  ['3 weeks ago', '2026-03-30', '2026-04-06', 0.75, '3 weeks ago'],
  ['2 months ago', '2026-02-06', '2026-03-08', 0.65, null],
  ['5年前', '2021-01-01', '2022-01-01', 0.6, null],
  ['today vs yesterday', '2026-04-21', '2026-04-23', 0.9, 'vs'],
  ['monsoon season plans', '2026-04-15', '2026-04-23', 0.3, 'mon season plans'],
  // Difference 3: −3/+3 and removed whole, winning over the shorter words they contain.
  ['大前天的会议', '2026-04-19', '2026-04-20', 0.9, '的会议'],
  ['大后天上线', '2026-04-25', '2026-04-26', 0.9, '上线'],
  ['大前天晚上', '2026-04-19', '2026-04-20', 0.9, '晚上'],
  ['大前年的账', '2023-01-01', '2024-01-01', 0.75, '的账'],
  ['大后年规划', '2029-01-01', '2030-01-01', 0.75, '规划']
]

describe('parseQueryTime', () => {
  for (const [query, start, end, conf, rest] of PARSES) {
    it(query, () => {
      const t = parseQueryTime(query, NOW)
      expect(t.has_time).toBe(true)
      expect(t.start_ms).toBe(day(start))
      expect(t.end_ms).toBe(day(end))
      expect(t.confidence).toBeCloseTo(conf, 9)
      if (rest !== null) expect(t.query_wo_time).toBe(rest)
    })
  }

  it('does not parse English full dates, lowercase month-year or a bare year', () => {
    for (const q of ['Meeting on March 15, 2024', 'what happened in may 2023', 'Where did Melanie go in 2022?']) {
      expect(parseQueryTime(q, NOW).has_time).toBe(false)
    }
  })

  it('takes the whole year for 2024年第一季度 (the year regex runs first)', () => {
    const t = parseQueryTime('2024年第一季度', NOW)
    expect([t.start_ms, t.end_ms, t.confidence]).toEqual([day('2024-01-01'), day('2025-01-01'), 0.85])
  })

  it('uses the UTC+8 date: 2026-04-21T20:00Z is already the 22nd', () => {
    const t = parseQueryTime('今天', Date.parse('2026-04-21T20:00:00Z'))
    expect([t.start_ms, t.end_ms]).toEqual([day('2026-04-22'), day('2026-04-23')])
  })

  it('drops an invalid explicit date and ignores N ago over 100', () => {
    expect(parseQueryTime('2024-02-30', NOW).has_time).toBe(false)
    expect(parseQueryTime('150 days ago', NOW).has_time).toBe(false)
  })

  it('reads 2024Q3 and Q3 2024 as the quarter', () => {
    for (const q of ['2024Q3 复盘', 'Q3 2024 review']) {
      const t = parseQueryTime(q, NOW)
      expect([t.start_ms, t.end_ms, t.confidence]).toEqual([day('2024-07-01'), day('2024-10-01'), 0.9])
    }
  })
})
