import { getEncoding } from 'js-tiktoken'
import { describe, expect, it } from 'vitest'
import { CONTEXT_FORMATS } from '../../src/context/formats.js'
import { BudgetTooSmallError, pack, type EvidenceChunk, type PackItem, type PackOptions } from '../../src/context/pack.js'
import { characters, tokenCounter } from '../../src/context/tokenizers.js'
import { cmrcParagraphs, CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'

const paragraphs = await cmrcParagraphs()

const hybridItem = (id: string, text: string, rank: number, score = 1 / (60 + rank)): PackItem =>
  ({ id, text, score, source: `cmrc/${id.split('#')[0]}.md`, mode: 'hybrid', metadata: { rank, title: `第 ${rank} 篇` } })
const graphItem = (id: string, text: string, rank: number, chunks: string[]): PackItem =>
  ({ id, text, score: 1, source: `graph:entity/${id}`, mode: 'graphrag', metadata: { rank, entity_name: id, source_chunk_ids: chunks } })

const noChunks = (): EvidenceChunk | undefined => undefined
const options = (over: Partial<PackOptions>): PackOptions => ({
  maxTokens: 1000, counter: characters, format: 'markdown', evidence: 'include', maxEvidencePerItem: 2, chunk: noChunks, ...over
})

describe('pack: never over the budget, counted by the named tokenizer', () => {
  describeWith(CMRC_TRIAL)('on CMRC paragraphs', () => {
    const items = paragraphs.slice(0, 12).map((p, i) => hybridItem(`p${i}#0`, p, i + 1))
    // budgets from "barely one item" to "everything fits", for every format and encoding
    const budgets = [60, 97, 150, 233, 400, 611, 1000, 1777, 2500, 4000, 9000]

    it.each(['o200k_base', 'cl100k_base'] as const)('%s: js-tiktoken counts the context at or under max_tokens, and as reported', async (name) => {
      const counter = await tokenCounter(name)
      const reference = getEncoding(name)
      for (const format of CONTEXT_FORMATS) {
        for (const maxTokens of budgets) {
          const packed = pack(items, options({ maxTokens, counter, format }))
          const measured = reference.encode(packed.context, [], []).length
          expect(measured, `${format} at ${maxTokens}`).toBeLessThanOrEqual(maxTokens)
          expect(packed.tokens, `${format} at ${maxTokens}`).toBe(measured)
          expect(packed.manifest.map((m) => m.id)).toEqual(items.map((i) => i.id))
          // a tight budget is filled: what is left is less than the next item would need, give or take a block
          if (maxTokens < 2000) expect(measured, `${format} at ${maxTokens}`).toBeGreaterThan(maxTokens * 0.5)
        }
      }
    })

    it('characters: the context has at most max_tokens code points; a budget under what the first item needs says so, and that much is enough', () => {
      let refused = 0
      for (const format of CONTEXT_FORMATS) {
        for (const maxTokens of budgets) {
          let packed
          try {
            packed = pack(items, options({ maxTokens, format }))
          } catch (error) {
            if (!(error instanceof BudgetTooSmallError)) throw error
            refused++
            expect(error.needed).toBeGreaterThan(maxTokens)
            packed = pack(items, options({ maxTokens: error.needed, format }))
            expect(packed.manifest[0]!.status).toBe('truncated')
            expect([...packed.context].length).toBeLessThanOrEqual(error.needed)
            continue
          }
          expect([...packed.context].length).toBeLessThanOrEqual(maxTokens)
          expect(packed.tokens).toBe([...packed.context].length)
        }
      }
      // jsonl's line overhead (id, source, label as JSON) is more than 60 characters
      expect(refused).toBeGreaterThan(0)
    })

    it('a budget too small for even the first item is an error saying what it needs', () => {
      expect(() => pack([hybridItem('a#0', paragraphs[0]!, 1)], options({ maxTokens: 10 }))).toThrow(BudgetTooSmallError)
      expect(() => pack([hybridItem('a#0', paragraphs[0]!, 1)], options({ maxTokens: 10 }))).toThrow(/max_tokens 10 is too small.*"a#0".*needs at least \d+ tokens/)
    })
  })

  it.each(['o200k_base', 'cl100k_base'] as const)('%s: texts that start with "/" or punctuation and end in newlines count as the whole does', async (name) => {
    const counter = await tokenCounter(name)
    const reference = getEncoding(name)
    const odd = ['/usr/bin/env node\n/etc/hosts。\n\n', '。。开头是标点\n\n\n', '#### 标题\n/路径/', '"引号" 开头\r\n', '  前面有空格。', 'end with slash /']
      .map((text, i) => hybridItem(`odd${i}#0`, text.repeat(3), i + 1))
    for (const format of CONTEXT_FORMATS) {
      for (const maxTokens of [100, 200, 2000]) {
        const packed = pack(odd, options({ maxTokens, counter, format }))
        expect(packed.tokens, `${format} at ${maxTokens}`).toBe(reference.encode(packed.context, [], []).length)
        expect(packed.tokens).toBeLessThanOrEqual(maxTokens)
      }
    }
  })

  it('cuts the first passage that does not fit at its end, keeps a prefix, and says so', () => {
    const text = '第一句话在这里。第二句话也在这里。第三句话还在这里。第四句话就在这里。'.repeat(4)
    const packed = pack([hybridItem('a#0', text, 1), hybridItem('b#0', '另一段。', 2)], options({ maxTokens: 80, format: 'text' }))
    const entry = packed.manifest[0]!
    expect(entry.status).toBe('truncated')
    expect(entry.truncated).toMatchObject({ at: 'end', reason: 'budget', original_chars: [...text].length })
    const kept = text.slice(0, entry.truncated!.kept_chars)
    // ends at a sentence, and the context holds the kept prefix followed by the ellipsis
    expect(kept.endsWith('。')).toBe(true)
    expect(packed.context).toContain(`${kept}…`)
    expect([...packed.context].length).toBeLessThanOrEqual(80)
  })

  it('an empty bundle packs to an empty context with an empty manifest', () => {
    expect(pack([], options({}))).toEqual({ context: '', tokens: 0, citations: [], manifest: [] })
  })
})

describe('pack: duplicates are packed once', () => {
  it('a chunk cited by two graphrag items is packed once; the second item points at it', () => {
    const chunks: Record<string, EvidenceChunk> = {
      'doc#0': { text: '甲乙两家公司在二〇一九年签订合作协议，共同开发新药。', source: 'a.md' },
      'doc#1': { text: '乙公司负责临床试验。', source: 'a.md' }
    }
    const items = [graphItem('甲公司', '甲公司: 制药企业\n甲公司 -[合作]-> 乙公司', 1, ['doc#0']), graphItem('乙公司', '乙公司: 研究机构', 2, ['doc#0', 'doc#1'])]
    const packed = pack(items, options({ chunk: (id) => chunks[id] }))
    // passages: [1] 甲公司, [2] doc#0, [3] 乙公司, [4] doc#1
    expect(packed.citations.map((c) => [c.marker, c.kind, c.id])).toEqual([[1, 'item', '甲公司'], [2, 'evidence', 'doc#0'], [3, 'item', '乙公司'], [4, 'evidence', 'doc#1']])
    expect(packed.context.split('甲乙两家公司').length - 1).toBe(1)
    expect(packed.manifest[1]!.evidence).toEqual([
      { chunk_id: 'doc#0', status: 'duplicate', reason: 'duplicate', marker: 2, tokens: 0 },
      expect.objectContaining({ chunk_id: 'doc#1', status: 'included', marker: 4 })
    ])
    expect(packed.citations[2]!.related_markers).toEqual([2, 4])
    expect(packed.citations[2]!.evidence_chunk_ids).toEqual(['doc#0', 'doc#1'])
    expect(packed.citations[1]!.related_markers).toEqual([1])
  })

  describeWith(CMRC_TRIAL)('on a CMRC paragraph', () => {
    const window = paragraphs[3]!

    it('a text another packed passage contains is a duplicate of it', () => {
      const items = [hybridItem('a#0', window, 1), hybridItem('b#0', `  ${window.slice(20, 90)}  `, 2)]
      const packed = pack(items, options({ maxTokens: 5000 }))
      expect(packed.manifest[1]).toEqual({ id: 'b#0', rank: 2, score: items[1]!.score, status: 'dropped', reason: 'duplicate', duplicate_of: 1, tokens: 0 })
      expect(packed.citations).toHaveLength(1)
    })

    it('an overlapping window keeps only what is new (its start is cut)', () => {
      // two windows over one text: [0, 120) and [80, 200)
      const first = window.slice(0, 120)
      const second = window.slice(80, 200)
      const packed = pack([hybridItem('w#0', first, 1), hybridItem('w#1', second, 2)], options({ maxTokens: 5000 }))
      const entry = packed.manifest[1]!
      expect(entry.status).toBe('truncated')
      expect(entry.truncated).toEqual({ at: 'start', reason: 'overlap', kept_chars: [...window.slice(120, 200).trimStart()].length, original_chars: [...second].length })
      expect(packed.context).toContain(window.slice(120, 200).trim())
      // the shared 40 characters appear once
      expect(packed.context.split(window.slice(80, 120)).length - 1).toBe(1)
    })
  })
})

describe('pack: graphrag evidence by its lineage weight', () => {
  // an item as graphrag answers it: `evidence` in the adapter's order, weighted score/√n, which need not be the
  // entity's own chunk order (`source_chunk_ids`)
  const weighted = (id: string, score: number, rank: number, chunks: string[], evidence: Array<[string, number]>): PackItem => ({
    id, text: `${id}: 实体`, score, source: `graph:entity/${id}`, mode: 'graphrag',
    metadata: { rank, entity_name: id, source_chunk_ids: chunks, evidence: evidence.map(([chunk_id, weight]) => ({ chunk_id, weight })) }
  })
  const texts: Record<string, string> = {
    'g#0': '网关在二〇二三年上线。', 'g#1': '网关的监控面板。', 'g#2': '网关由平台组负责维护。',
    's#0': '平台组负责网关和鉴权中间件。', 'a#0': '鉴权中间件校验访问令牌。', 'copy#0': '鉴权中间件校验访问令牌。', 'b#0': '平台组有六个人。'
  }
  const chunk = (id: string): EvidenceChunk | undefined => (texts[id] ? { text: texts[id]!, source: `${id.split('#')[0]}.md` } : undefined)

  it('packs the evidence of higher weight first, not the entity\'s chunk order, up to max_evidence_per_item', () => {
    // weights 1, 1/√2, 1/√3 on g#2, g#0, g#1: with 2 per item, g#2 then g#0; g#1 is left out
    const items = [weighted('网关', 1, 1, ['g#0', 'g#1', 'g#2'], [['g#1', 0.5774], ['g#2', 1], ['g#0', 0.7071]])]
    const packed = pack(items, options({ chunk }))
    expect(packed.citations.map((c) => [c.marker, c.kind, c.id])).toEqual([[1, 'item', '网关'], [2, 'evidence', 'g#2'], [3, 'evidence', 'g#0']])
    expect(packed.context.indexOf(texts['g#2']!)).toBeLessThan(packed.context.indexOf(texts['g#0']!))
    expect(packed.context).not.toContain(texts['g#1'])
    expect(packed.manifest[0]!.evidence).toEqual([
      { chunk_id: 'g#2', weight: 1, status: 'included', marker: 2, tokens: expect.any(Number) },
      { chunk_id: 'g#0', weight: 0.7071, status: 'included', marker: 3, tokens: expect.any(Number) },
      { chunk_id: 'g#1', weight: 0.5774, status: 'dropped', reason: 'budget', tokens: 0 }
    ])
    expect(packed.citations[0]!.related_markers).toEqual([2, 3])
  })

  it('a chunk two items cite, or a chunk whose text is already packed, is packed once', () => {
    const items = [
      weighted('鉴权中间件', 1, 1, ['a#0', 's#0'], [['s#0', 1], ['a#0', 0.7071]]),
      weighted('平台组', 0.6, 2, ['s#0', 'copy#0', 'b#0'], [['s#0', 0.6], ['copy#0', 0.4243], ['b#0', 0.3464]])
    ]
    const packed = pack(items, options({ chunk, maxEvidencePerItem: 3 }))
    // [1] 鉴权中间件, [2] s#0, [3] a#0, [4] 平台组, [5] b#0: s#0 is [2] already, copy#0's text is [3]'s
    expect(packed.citations.map((c) => [c.marker, c.kind, c.id])).toEqual([
      [1, 'item', '鉴权中间件'], [2, 'evidence', 's#0'], [3, 'evidence', 'a#0'], [4, 'item', '平台组'], [5, 'evidence', 'b#0']
    ])
    expect(packed.manifest[1]!.evidence).toEqual([
      { chunk_id: 's#0', weight: 0.6, status: 'duplicate', reason: 'duplicate', marker: 2, tokens: 0 },
      { chunk_id: 'copy#0', weight: 0.4243, status: 'duplicate', reason: 'duplicate', marker: 3, tokens: 0 },
      { chunk_id: 'b#0', weight: 0.3464, status: 'included', marker: 5, tokens: expect.any(Number) }
    ])
    expect(packed.context.split(texts['a#0']!).length - 1).toBe(1)
    expect(packed.context.split(texts['s#0']!).length - 1).toBe(1)
    expect(packed.citations[3]!.related_markers).toEqual([2, 3, 5])
  })

  it('an item without weights (an answer cached before them) brings source_chunk_ids in order', () => {
    const packed = pack([graphItem('网关', '网关: 实体', 1, ['g#1', 'g#0'])], options({ chunk }))
    expect(packed.manifest[0]!.evidence!.map((e) => [e.chunk_id, e.status, e.weight])).toEqual([['g#1', 'included', undefined], ['g#0', 'included', undefined]])
  })
})

describe('pack: items left out on purpose', () => {
  it('below min_score is below_threshold; a blank text, or a graphrag item without evidence under require, is no_evidence', () => {
    const items = [
      hybridItem('low#0', '分数很低的一段。', 1, 0.001),
      hybridItem('blank#0', '   ', 2, 0.5),
      graphItem('无证据', '无证据: 一个实体', 3, ['gone#0']),
      graphItem('有证据', '有证据: 另一个实体', 4, ['here#0'])
    ]
    const chunk = (id: string) => (id === 'here#0' ? { text: '这里有证据。', source: 'here.md' } : undefined)
    const packed = pack(items, options({ minScore: 0.01, evidence: 'require', chunk }))
    expect(packed.manifest.map((m) => [m.id, m.status, m.reason])).toEqual([
      ['low#0', 'dropped', 'below_threshold'], ['blank#0', 'dropped', 'no_evidence'], ['无证据', 'dropped', 'no_evidence'], ['有证据', 'included', undefined]
    ])
    expect(packed.manifest[3]!.evidence).toEqual([expect.objectContaining({ chunk_id: 'here#0', status: 'included', marker: 2 })])
  })

  it('evidence: none packs graphrag items alone; a missing chunk is reported missing', () => {
    const items = [graphItem('x', 'x: 实体', 1, ['gone#0', 'here#0'])]
    const chunk = (id: string) => (id === 'here#0' ? { text: '这里有证据。', source: 'here.md' } : undefined)
    expect(pack(items, options({ evidence: 'none', chunk })).citations).toHaveLength(1)
    const packed = pack(items, options({ chunk }))
    expect(packed.manifest[0]!.evidence!.map((e) => e.status)).toEqual(['missing', 'included'])
  })
})

describe('formats', () => {
  const items = [hybridItem('a#0', '第一段 <b>&"引号"', 1), hybridItem('b#0', '第二段', 2)]
  it('xml: one escaped element per source inside <context>', () => {
    const { context } = pack(items, options({ format: 'xml' }))
    expect(context).toBe('<context>\n' +
      '<source id="1" ref="a#0" source="cmrc/a.md" mode="hybrid" label="第 1 篇">\n第一段 &lt;b&gt;&amp;&quot;引号&quot;\n</source>\n' +
      '<source id="2" ref="b#0" source="cmrc/b.md" mode="hybrid" label="第 2 篇">\n第二段\n</source>\n' +
      '</context>\n')
  })
  it('jsonl: one JSON object per line', () => {
    const lines = pack(items, options({ format: 'jsonl' })).context.trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)
    expect(lines).toEqual([
      { marker: 1, kind: 'item', id: 'a#0', source: 'cmrc/a.md', mode: 'hybrid', label: '第 1 篇', text: '第一段 <b>&"引号"' },
      { marker: 2, kind: 'item', id: 'b#0', source: 'cmrc/b.md', mode: 'hybrid', label: '第 2 篇', text: '第二段' }
    ])
  })
  it('markdown and text: a heading with the marker, source and label, then the text', () => {
    expect(pack(items, options({ format: 'markdown' })).context).toBe('### [1] cmrc/a.md — 第 1 篇\n第一段 <b>&"引号"\n\n### [2] cmrc/b.md — 第 2 篇\n第二段\n\n')
    expect(pack(items, options({ format: 'text' })).context).toBe('[1] cmrc/a.md — 第 1 篇\n第一段 <b>&"引号"\n\n[2] cmrc/b.md — 第 2 篇\n第二段\n\n')
  })
})
