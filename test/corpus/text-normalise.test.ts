/**
 * Normalisation before the junk check (docs/formats.md, "Junk, normalised characters"): control and invisible
 * characters are removed, or become a space between two words of a spaced script; what a wrong decoding leaves is
 * kept for the junk check. Expected texts are written out by hand from that rule.
 */
import { describe, expect, it } from 'vitest'
import { normaliseText } from '../../src/corpus/text-normalise.js'
import { textProblem } from '../../src/corpus/text-junk.js'
import { normaliseDocument } from '../../src/corpus/documents/normalise.js'

const rows: Array<[label: string, text: string, expected: string, normalised: number]> = [
  // the titles of KUAKE-QTR that hold U+001A (issue 39), as they are there
  ['a SUB before a space', '淋巴结肿大患者全胸片检查\u001a 问题：已经行ct检查', '淋巴结肿大患者全胸片检查 问题：已经行ct检查', 1],
  ['a SUB between Chinese characters', '脖子黑就是搓不掉\u001a应该怎么办', '脖子黑就是搓不掉应该怎么办', 1],
  ['runs of SUB around a title', '\u001a\u001a\u001a\u001a\u001a 孕妇出血是什么原因？\u001a\u001a\u001a', ' 孕妇出血是什么原因？', 8],
  ['a SUB between Latin words becomes a space', 'hello\u001aworld', 'hello world', 1],
  ['a NUL and a BEL between digits', 'port 80\u0000\u000780', 'port 80 80', 2],
  ['DEL after punctuation', 'ok.\u007f next', 'ok. next', 1],
  ['a soft hyphen joins', 'co\u00adoperate', 'cooperate', 1],
  ['a word joiner and a BOM inside the text', '\ufeff# 标题\n\nA\u2060B', '# 标题\n\nAB', 2],
  ['a zero-width space between Latin words', 'zero\u200bwidth', 'zero width', 1],
  ['tab, line feed, vertical tab, form feed, carriage return are text', 'a\tb\nc\vd\fe\r\n', 'a\tb\nc\vd\fe\r\n', 0],
  ['what a wrong decoding leaves is kept', 'Ã¤\u0085\ufffd\ud800', 'Ã¤\u0085\ufffd\ud800', 0]
]

describe('normaliseText', () => {
  it.each(rows)('%s', (_label, text, expected, normalised) => {
    expect(normaliseText(text)).toEqual({ text: expected, normalised })
  })

  it('leaves a clean text as given (the same string)', () => {
    const text = '# 值班说明\n\n夜间告警由二线值班处理。'
    expect(normaliseText(text).text).toBe(text)
  })

  it('a title with one SUB is junk before normalising and clean after', () => {
    const title = '淋巴结肿大患者全胸片检查\u001a 问题：已经行ct检查'
    expect(textProblem(title)).toMatch(/^1 of its 24 characters \(4\.2%\) are replacement or control characters/)
    expect(textProblem(normaliseText(title).text)).toBeUndefined()
  })

  it('counts what it removed in the document metadata, beside the metadata given', () => {
    const { document, normalised } = normaliseDocument({ id: 't1', text: '脖子黑就是搓不掉\u001a应该怎么办', metadata: { lang: 'zh' } })
    expect(normalised).toBe(1)
    expect(document).toEqual({ id: 't1', text: '脖子黑就是搓不掉应该怎么办', metadata: { lang: 'zh', normalised_chars: 1 } })
    const clean = { id: 't2', text: '正文。' }
    expect(normaliseDocument(clean)).toEqual({ document: clean, normalised: 0 })
  })
})
