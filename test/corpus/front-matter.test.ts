import { describe, expect, it } from 'vitest'
import { frontMatterOf } from '../../src/corpus/markdown.js'

describe('frontMatterOf', () => {
  it('reads a leading YAML front matter (BOM, CRLF and CR line ends too), and finds none elsewhere', () => {
    const fields = { id: 'oncall', title: '值班说明' }
    expect(frontMatterOf('---\nid: oncall\ntitle: 值班说明\n---\n# 值班\n\n正文。')).toEqual(fields)
    expect(frontMatterOf('\uFEFF---\r\nid: oncall\r\ntitle: 值班说明\r\n---\r\n正文。')).toEqual(fields)
    expect(frontMatterOf('---\rid: oncall\rtitle: 值班说明\r---\r正文。')).toEqual(fields)
    // a thematic break later on, or a heading first: no front matter
    expect(frontMatterOf('# 值班\n\n---\nid: oncall\n---\n')).toEqual({})
    expect(frontMatterOf('正文。\n---\n')).toEqual({})
    expect(frontMatterOf('')).toEqual({})
  })
})
