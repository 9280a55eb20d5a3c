import { describe, expect, it } from 'vitest'
import { chunkMarkdown, chunkSize, MAX_CJK_CHARS, parseMarkdown, splitSentences } from '../../src/corpus/chunker.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'

const doc = `---
id: expense-policy
title: 差旅与报销管理办法
---
# 差旅与报销管理办法

本办法适用于全体员工。

## 第一节 适用范围

适用于出差与日常报销。

## 第二节 标准

一线城市住宿每晚不超过600元。
`

describe('chunker', () => {
  it('reads front matter and the first heading', () => {
    const p = parseMarkdown(doc)
    expect(p.frontMatter).toEqual({ id: 'expense-policy', title: '差旅与报销管理办法' })
    expect(p.heading).toBe('差旅与报销管理办法')
    expect(p.body.startsWith('# 差旅与报销管理办法')).toBe(true)
  })

  it('makes the title with its intro chunk 0 and each short section one chunk', () => {
    const chunks = chunkMarkdown(parseMarkdown(doc).body)
    expect(chunks.map((c) => c.text)).toEqual([
      '# 差旅与报销管理办法\n\n本办法适用于全体员工。',
      '## 第一节 适用范围\n\n适用于出差与日常报销。',
      '## 第二节 标准\n\n一线城市住宿每晚不超过600元。'
    ])
    expect(chunks.map((c) => c.index)).toEqual([0, 1, 2])
  })

  it('gives chunk ids <doc id>#<index>, the title and the source', () => {
    const chunks = chunkDocument({ id: 'expense-policy', text: doc, source: 'finance/expense.md' })
    expect(chunks.map((c) => c.id)).toEqual(['expense-policy#0', 'expense-policy#1', 'expense-policy#2'])
    expect(chunks.every((c) => c.title === '差旅与报销管理办法' && c.source === 'finance/expense.md')).toBe(true)
  })

  it('joins a heading without text to the next section', () => {
    const chunks = chunkMarkdown('# 标题\n## 第一节\n\n正文。')
    expect(chunks.map((c) => c.text)).toEqual(['# 标题\n\n## 第一节\n\n正文。'])
  })

  it('splits a long section at sentence ends, never above the limit, losing no text', () => {
    const sentence = '咳嗽持续三周以上应当进行胸部影像检查。'  // 18 CJK characters and a full stop
    const body = `## 长节\n\n${sentence.repeat(60)}`
    const chunks = chunkMarkdown(body)
    expect(chunks.length).toBeGreaterThan(1)
    for (const c of chunks) {
      expect(chunkSize(c.text)).toBeLessThanOrEqual(MAX_CJK_CHARS)
      expect(c.text.endsWith('。')).toBe(true)
    }
    expect(chunks.map((c) => c.text).join('').replace(/\s/g, '')).toBe(body.replace(/\s/g, ''))
  })

  it('counts about 350 English words as the limit', () => {
    const words = Array.from({ length: 700 }, (_, i) => `word${i}`)
    const text = `${words.slice(0, 350).join(' ')}. ${words.slice(350).join(' ')}.`
    const chunks = chunkMarkdown(text)
    expect(chunks).toHaveLength(2)
    expect(chunks[0]!.text.split(' ')).toHaveLength(350)
  })

  it('hard-splits a single sentence longer than the limit', () => {
    // 1,000 different CJK characters (identical parts would be given once)
    const chunks = chunkMarkdown(Array.from({ length: 1000 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join(''))
    expect(chunks.map((c) => c.text.length)).toEqual([480, 480, 40])
  })

  it('does not split inside fenced code or on # inside it', () => {
    const chunks = chunkMarkdown('# T\n\n```\n# not a heading\n```\n\n## A\n\ntext')
    expect(chunks).toHaveLength(2)
    expect(chunks[0]!.text).toContain('# not a heading')
  })

  it('splits sentences at CJK and Latin ends but not inside numbers', () => {
    expect(splitSentences('体温38.5度。需要复查！Version 1.2 ships. Then stop?')).toEqual([
      '体温38.5度。', '需要复查！', 'Version 1.2 ships.', 'Then stop?'
    ])
  })

  it('gives no chunk for empty text', () => {
    expect(chunkMarkdown('  \n ')).toEqual([])
    expect(chunkMarkdown('')).toEqual([])
  })
})
