import { describe, expect, it } from 'vitest'
import { DEFAULT_EPISODIC_CONFIG } from '../../../adapters/episodic/config.js'
import { preprocessQuery } from '../../../adapters/episodic/preprocess.js'

// Spec section 3.3, every row (now = 2026-04-22T12:00:00Z). `keyword` is upstream's string, which is our
// terms joined with no separator (difference 2). The last row carries difference 3.
const NOW = Date.parse('2026-04-22T12:00:00Z')
type Row = [query: string, vector: string, reason: string | null, hybrid: boolean, keyword: string | null, time: [string, string, number] | null]
const TABLE: Row[] = [
  ['NPS是什么', 'NPS', 'mixed_lang', true, 'NPS', null],
  ['API 流式返回那个任务有哪些约束？', 'API 流式返回那个任务有哪些约束', 'mixed_lang', true, 'API', null],
  ['40万预算那个方案后来怎么改了？', '40万预算那个方案后来改了', 'number', true, '40万', null],
  ['为什么是这样', '为这样', 'short_query', true, '为这样', null],
  ['怎么做预算？', '预算', 'short_query', true, '预算', null],
  ['什么时候上线', '什么时候上线', 'short_query', true, '上线', null],
  ['哪些人参加了会议呢', '哪些人参加了会议', null, false, '人参加了会议', null],
  ['Redis 和 Kafka 怎么选', 'Redis 和 Kafka 选', 'mixed_lang', true, 'RedisKafka', null],
  ['Q3 GMV 增长了 15% 吗', 'Q3 GMV 增长了 15%', 'mixed_lang', true, 'Q3GMV', null],
  ['GPT-4o 的价格', 'GPT-4o 的价格', 'mixed_lang', true, 'GPTo', null],
  ['用户增长了20%吗', '用户增长了20%', 'number', true, '20%', null],
  ['Alice 花了500元', 'Alice 花了500元', 'mixed_lang', true, 'Alice', null],
  ['who', 'who', 'short_query', true, 'who', null],
  ['What did Caroline say about the LGBTQ support group', 'What did Caroline say about the LGBTQ support group', null, false, null, null],
  ['Where did Melanie go in 2022?', 'Where did Melanie go in 2022', 'number', true, '2022', null],
  ['2024年3月的预算', '的预算', 'short_query', true, '的预算', ['2024-03-01', '2024-04-01', 0.9]],
  ['上周的预算会议结论', '的预算会议结论', null, false, null, ['2026-04-13', '2026-04-20', 0.85]],
  ['去年的营收多少', '的营收多少', 'short_query', true, '的营收', ['2025-01-01', '2026-01-01', 0.75]],
  ['最近怎么样', '样', 'short_query', true, '样', ['2026-04-15', '2026-04-23', 0.5]],
  ['What happened last week?', 'What happened', null, false, null, ['2026-04-13', '2026-04-20', 0.85]],
  ['what happened in May 2023', 'what happened in', null, false, null, ['2023-05-01', '2023-06-01', 0.9]],
  ['Meeting on March 15, 2024', 'Meeting on March 15, 2024', 'number', true, '152024', null],
  ['Q1 2024 revenue', 'revenue', null, false, null, ['2024-01-01', '2024-04-01', 0.9]],
  ['2024-03-15 standup', 'standup', null, false, null, ['2024-03-15', '2024-03-16', 0.95]],
  ['3天前讨论的事情', '讨论的事情', null, false, null, ['2026-04-19', '2026-04-20', 0.85]],
  // Difference 3: upstream gives `大的会议`, None, and 2026-04-20 (−2 days).
  ['大前天的会议', '的会议', 'short_query', true, '的会议', ['2026-04-19', '2026-04-20', 0.9]]
]

describe('preprocessQuery', () => {
  for (const [query, vector, reason, hybrid, keyword, time] of TABLE) {
    it(query, () => {
      const pre = preprocessQuery(query, DEFAULT_EPISODIC_CONFIG, NOW)
      expect(pre.vector_query).toBe(vector)
      expect(pre.hybrid_reason).toBe(reason)
      expect(pre.use_hybrid).toBe(hybrid)
      if (keyword !== null) expect(pre.keyword).toBe(keyword)
      if (time === null) {
        expect(pre.time_info?.has_time ?? false).toBe(false)
      } else {
        expect(pre.time_info?.has_time).toBe(true)
        expect(pre.time_info?.start_ms).toBe(Date.parse(`${time[0]}T00:00:00Z`))
        expect(pre.time_info?.end_ms).toBe(Date.parse(`${time[1]}T00:00:00Z`))
        expect(pre.time_info?.confidence).toBeCloseTo(time[2], 9)
      }
    })
  }

  it('keeps the keyword as terms (difference 2)', () => {
    expect(preprocessQuery('Redis 和 Kafka 怎么选', DEFAULT_EPISODIC_CONFIG, NOW).keyword_terms).toEqual(['Redis', 'Kafka'])
    expect(preprocessQuery('3个人5天能做完吗', DEFAULT_EPISODIC_CONFIG, NOW).keyword_terms).toEqual(['3个人', '5天'])
  })

  it('counts full-width digits as digits', () => {
    expect(preprocessQuery('预算４０万够吗', DEFAULT_EPISODIC_CONFIG, NOW).hybrid_reason).toBe('number')
  })

  it('never leaves an empty vector query', () => {
    for (const q of ['？', '?', '吗', '昨天', 'the']) {
      expect(preprocessQuery(q, DEFAULT_EPISODIC_CONFIG, NOW).vector_query).not.toBe('')
    }
  })
})
