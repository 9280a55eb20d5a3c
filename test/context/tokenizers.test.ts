import { getEncoding } from 'js-tiktoken'
import { describe, expect, it } from 'vitest'
import { tokenCounter } from '../../src/context/tokenizers.js'
import { cmrcParagraphs, CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'

const paragraphs = await cmrcParagraphs()

const edgeCases = [
  '', ' ', '\n\n\n', 'hello world', "It's I'LL they've we'd", '  multiple   spaces\n\n  \r\nnewlines ', '1234567890 ١٢٣٤',
  'emoji 😀👍🏽 and 𠮷野家', 'GPT-4o 的 API 流式返回', 'tabs\tand\u00a0nbsp', 'a/b/c\n/usr/bin', 'ｆｕｌｌ ｗｉｄｔｈ ＡＰＩ', '<|endoftext|> plain'
]

describe.each(['o200k_base', 'cl100k_base'] as const)('%s counter', (name) => {
  // js-tiktoken's own encoder is the reference; special-token strings count as plain text (nothing disallowed)
  const reference = getEncoding(name)
  const expected = (s: string) => reference.encode(s, [], []).length

  it('counts as js-tiktoken does on edge cases', async () => {
    const counter = await tokenCounter(name)
    for (const s of edgeCases) expect(counter.count(s), JSON.stringify(s)).toBe(expected(s))
  })

  describeWith(CMRC_TRIAL)('on CMRC paragraphs', () => {
    it('counts as js-tiktoken does', async () => {
      const counter = await tokenCounter(name)
      for (const p of paragraphs.slice(0, 40)) expect(counter.count(p), p.slice(0, 20)).toBe(expected(p))
    })

    it('gives the same count the second time (the piece memo is exact)', async () => {
      const counter = await tokenCounter(name)
      const text = paragraphs.slice(40, 45).join('\n')
      expect(counter.count(text)).toBe(counter.count(text))
      expect(counter.count(text)).toBe(expected(text))
    })
  })
})

describe('characters counter', () => {
  it('counts code points', async () => {
    const counter = await tokenCounter('characters')
    // 𠮷 and 😀 are one character each, two UTF-16 units
    expect(counter.count('a𠮷😀中')).toBe(4)
    expect(counter.count('')).toBe(0)
  })
})
