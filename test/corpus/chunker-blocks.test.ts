import { describe, expect, it } from 'vitest'
import { chunkMarkdown, parseMarkdown } from '../../src/corpus/chunker.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'

/** `n` different CJK characters from `from` on (each counts 1 against the 480 limit). */
const han = (n: number, from = 0) => Array.from({ length: n }, (_, i) => String.fromCodePoint(0x4e00 + from + i)).join('')

describe('chunks from Markdown blocks', () => {
  it('keeps a fenced code block whole, blank lines inside it too, in a chunk of its own when it does not fit beside the text', () => {
    const prose = han(470)
    const code = ['```js', 'const a = 1', 'const b = 2', '', 'const c = 3', '', '', 'const d = 4', '```'].join('\n')
    const chunks = chunkMarkdown(`## 节\n\n${prose}\n\n${code}\n`)
    // heading and text: 471 characters; the code's 13 words (```js, then const, a, 1 … four times) add 17.8, over 480
    expect(chunks.map((c) => c.text)).toEqual([`## 节\n\n${prose}`, code])
    expect(chunks.every((c) => c.split === undefined)).toBe(true)
  })

  it('cuts a fence that alone is over the limit at line ends only, and marks its chunks', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `x${i} = ${i}`)
    const code = ['```py', ...lines, '```'].join('\n')
    const chunks = chunkMarkdown(code)
    // words: `py` 1, each line 2 (`=` is no word); 480/350 units a word: 1 + 2k <= 350 holds up to k = 174 lines
    expect(chunks.map((c) => c.text)).toEqual([
      ['```py', ...lines.slice(0, 174)].join('\n'),
      [...lines.slice(174), '```'].join('\n')
    ])
    expect(chunks.map((c) => c.split)).toEqual(['lines', 'lines'])
  })

  it('keeps a table whole', () => {
    // 450 characters, then a table of 52 characters and 12 words (16.5): 518 in all, over 480
    const prose = han(450)
    const table = ['| 项目 | 标准 |', '|---|---|', ...Array.from({ length: 12 }, (_, i) => `| ${han(3, 500 + i * 3)} | ${i} 元 |`)].join('\n')
    const chunks = chunkMarkdown(`${prose}\n\n${table}`)
    expect(chunks.map((c) => c.text)).toEqual([prose, table])
  })

  it('packs list items whole, never cutting one between its lines', () => {
    const items = Array.from({ length: 6 }, (_, i) => `- ${han(100, i * 110)}\n  ${han(10, i * 110 + 100)}`)
    const chunks = chunkMarkdown(items.join('\n'))
    // each item is 110 characters: four make 440, a fifth would make 550
    expect(chunks.map((c) => c.text)).toEqual([items.slice(0, 4).join('\n'), items.slice(4).join('\n')])
    expect(chunks.every((c) => c.split === undefined)).toBe(true)
  })

  it('cuts a list item that alone is over the limit at its line ends, and marks it', () => {
    const [a, b, c] = [han(200), han(200, 200), han(200, 400)]
    const chunks = chunkMarkdown(`- ${a}\n  ${b}\n  ${c}`)
    expect(chunks.map((x) => x.text)).toEqual([`- ${a}\n  ${b}`, `  ${c}`])
    expect(chunks.map((x) => x.split)).toEqual(['lines', 'lines'])
  })

  it('takes a heading anchor {#id} out of the text and the title into `anchor`', () => {
    const text = '# 计算属性 {#computed}\n\n基础示例。\n\n## 计算属性缓存 vs 方法 {#computed-caching-vs-methods}\n\n它会缓存结果。'
    expect(parseMarkdown(text).heading).toBe('计算属性')
    const chunks = chunkDocument({ id: 'vue', text })
    expect(chunks.map((c) => ({ text: c.text, title: c.title, anchor: c.anchor, heading_path: c.heading_path }))).toEqual([
      { text: '# 计算属性\n\n基础示例。', title: '计算属性', anchor: 'computed', heading_path: ['计算属性'] },
      { text: '## 计算属性缓存 vs 方法\n\n它会缓存结果。', title: '计算属性', anchor: 'computed-caching-vs-methods', heading_path: ['计算属性', '计算属性缓存 vs 方法'] }
    ])
  })

  it('gives a heading without {#id} its GitHub-style slug, numbered when repeated', () => {
    const chunks = chunkMarkdown('## Getting Started!\n\nOne.\n\n## Getting Started\n\nTwo.\n\n## `v-model` 用法\n\nThree.')
    expect(chunks.map((c) => c.anchor)).toEqual(['getting-started', 'getting-started-1', 'v-model-用法'])
  })

  it('gives each chunk the headings above it, outermost first', () => {
    const text = 'Preface.\n\n# Guide\n\nIntro.\n\n## A\n\nAbout A.\n\n### A1\n\nAbout A1.\n\n## B\n\nAbout B.\n\n# Appendix\n\nEnd.'
    expect(chunkMarkdown(text).map((c) => [c.text.split('\n').at(-1), c.headingPath])).toEqual([
      ['Preface.', []],
      ['Intro.', ['Guide']],
      ['About A.', ['Guide', 'A']],
      ['About A1.', ['Guide', 'A', 'A1']],
      ['About B.', ['Guide', 'B']],
      ['End.', ['Appendix']]
    ])
    // chunk records carry no heading_path before the first heading
    expect(chunkDocument({ id: 'd', text })[0]!.heading_path).toBeUndefined()
  })

  it('leaves out scripts, styles and HTML-only components, and keeps HTML with prose', () => {
    const text = [
      '# 组件', '', '<script setup>', "import { ref } from 'vue'", '', 'const count = ref(0)', '</script>', '',
      '<style scoped>', '.demo { color: red }', '</style>', '', '正文。', '', '<ClientOnly><Demo /></ClientOnly>', '',
      '<!-- 注释 -->', '', '<div class="tip">注意缓存。</div>'
    ].join('\n')
    expect(chunkMarkdown(text).map((c) => c.text)).toEqual(['# 组件\n\n正文。\n\n<div class="tip">注意缓存。</div>'])
  })

  it('gives identical chunks of one document once, numbering the rest without a gap', () => {
    const [p, q] = [han(300), han(300, 300)]
    const chunks = chunkDocument({ id: 'd', text: `${p}\n\n${p}\n\n${q}` })
    expect(chunks.map((c) => [c.id, c.text])).toEqual([['d#0', p], ['d#1', q]])
  })

  it('reads a YAML front matter, keeps its scalars and leaves it out of the chunks', () => {
    const text = '---\nid: vue-computed\ntitle: >-\n  计算\n  属性\norder: 3\ntags: [a, b]\n---\n正文。\n\n---\n\n后文。'
    const p = parseMarkdown(text)
    expect(p.frontMatter).toEqual({ id: 'vue-computed', title: '计算 属性', order: '3' })
    expect(chunkMarkdown(p).map((c) => c.text)).toEqual(['正文。\n\n后文。'])
    expect(chunkDocument({ id: 'x', text })[0]!.title).toBe('计算 属性')
  })
})
