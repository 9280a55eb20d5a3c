import { describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { contextHeader, lexicalText, passageText } from '../../src/kernel/lexical-text.js'

const doc = [
  '# 计算属性 {#computed}', '', '模板中的表达式虽然方便，但只能做简单的操作。', '',
  '## 计算属性缓存 vs 方法 {#computed-caching-vs-methods}', '', '它会缓存结果。'
].join('\n')

describe('the contextual header both legs index', () => {
  it('puts the title and the headings above a chunk before it, leaving out what its text already holds', () => {
    expect(contextHeader({ text: '它会缓存结果。', title: '计算属性', heading_path: ['计算属性', '计算属性缓存 vs 方法'] }))
      .toBe('计算属性 > 计算属性缓存 vs 方法')
    expect(contextHeader({ text: '## 计算属性缓存 vs 方法\n\n它会缓存结果。', title: 'Vue 指南', heading_path: ['计算属性', '计算属性缓存 vs 方法'] }))
      .toBe('Vue 指南 > 计算属性')
    expect(contextHeader({ text: '# 计算属性\n\n正文。', title: '计算属性', heading_path: ['计算属性'] })).toBe('')
    expect(contextHeader({ text: '没有标题的段落。' })).toBe('')
    // named in a sentence, not as a heading line: still a header
    expect(contextHeader({ text: '缓存让计算属性更快。', title: '计算属性' })).toBe('计算属性')
  })

  it('gives the header to the lexical and the vector text, and the chunk alone to callers', () => {
    const [first, second] = chunkDocument({ id: 'vue', text: doc })
    expect(second!.text).toBe('## 计算属性缓存 vs 方法\n\n它会缓存结果。')
    // the second chunk holds its own heading but not the title; the first holds both
    expect(lexicalText(second!)).toBe('计算属性\n## 计算属性缓存 vs 方法\n\n它会缓存结果。')
    expect(passageText(second!)).toBe('计算属性\n## 计算属性缓存 vs 方法\n\n它会缓存结果。')
    expect(lexicalText(first!)).toBe(first!.text)
  })

  it('names the section of a continuation chunk, which holds no heading', () => {
    const long = Array.from({ length: 30 }, (_, i) => `第${i}句说明缓存何时失效以及为何需要重新计算结果。`).join('')
    const chunks = chunkDocument({ id: 'vue', text: `# 计算属性\n\n## 缓存\n\n${long}` })
    expect(chunks.length).toBeGreaterThan(1)
    expect(lexicalText(chunks[1]!).split('\n')[0]).toBe('计算属性 > 缓存')
  })
})
