import { describe, expect, it } from 'vitest'
import { llmContribution, mergeContributions, type ChunkExtraction } from '../../src/derive/llm/answer.js'
import { derivationOptions } from '../../src/derive/options.js'
import type { KgContribution } from '../../src/providers/knowledge-graph/port.js'

// What a document's chunks contribute by the model's answers, and that part joined with the rules' (docs/llm-extraction.md).
const options = derivationOptions()

describe('llmContribution', () => {
  it('merges names across chunks by normalised name, keeps the rules\' thresholds and stop list, and makes relation ends entities', () => {
    const extractions = new Map<string, ChunkExtraction>([
      ['d#0', {
        entities: [{ name: 'GPT-4o', type: '模型' }, { name: '系统' }, { name: '甲' }, { name: '平台组', type: '机构', description: '负责鉴权' }],
        relations: [
          { source: '平台组', target: '鉴权中间件', type: '负责' },
          { source: '平台组', target: '平台组', type: '包含' },
          { source: '平台组', target: 'gpt-4o', type: '这是一句话而不是一种关系的类型名称所以太长了不能要' }
        ]
      }],
      ['d#2', { entities: [{ name: 'ｇｐｔ-4O', type: '别的类型' }], relations: [{ source: '平台组', target: '鉴权中间件', type: '负责' }] }]
    ])
    const c = llmContribution([{ id: 'd#0' }, { id: 'd#1' }, { id: 'd#2' }], extractions, options)
    expect(c.entities).toEqual([
      { key: 'gpt-4o', name: 'GPT-4o', type: '模型', chunk_ids: ['d#0', 'd#2'], mentions: 2, llm: true },
      { key: '平台组', name: '平台组', type: '机构', description: '负责鉴权', chunk_ids: ['d#0', 'd#2'], mentions: 2, llm: true },
      { key: '鉴权中间件', name: '鉴权中间件', chunk_ids: ['d#0', 'd#2'], mentions: 2, llm: true }
    ])
    expect(c.relations).toEqual([{ source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['d#0', 'd#2'], count: 2, llm: true }])
  })
})

describe('mergeContributions', () => {
  it('keeps the rules\' name, takes the model\'s type and description, joins the chunks in chunk order and marks what the model found', () => {
    const rules: KgContribution = {
      entities: [
        { key: '平台组', name: '平台组', description: '平台组是基础设施团队。', chunk_ids: ['d#10'], mentions: 3 },
        { key: '鉴权中间件', name: '鉴权中间件', chunk_ids: ['d#0'], mentions: 1 }
      ],
      relations: [{ source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['d#10'], count: 1 }]
    }
    const llm: KgContribution = {
      entities: [{ key: '平台组', name: '平台组', type: '机构', chunk_ids: ['d#2'], mentions: 1, llm: true }],
      relations: [
        { source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['d#2'], count: 2, llm: true },
        { source: '平台组', target: '鉴权中间件', type: '维护', chunk_ids: ['d#2'], count: 1, llm: true }
      ]
    }
    expect(mergeContributions(rules, llm)).toEqual({
      entities: [
        { key: '平台组', name: '平台组', type: '机构', description: '平台组是基础设施团队。', chunk_ids: ['d#2', 'd#10'], mentions: 3, llm: true },
        { key: '鉴权中间件', name: '鉴权中间件', chunk_ids: ['d#0'], mentions: 1 }
      ],
      relations: [
        // sorted by source, type, target in code-unit order, as deriveDocument sorts: 维 (U+7EF4) before 负 (U+8D1F)
        { source: '平台组', target: '鉴权中间件', type: '维护', chunk_ids: ['d#2'], count: 1, llm: true },
        { source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['d#2', 'd#10'], count: 2, llm: true }
      ]
    })
  })
})
