/**
 * A `.txt` file, a PDF's text and an image's recognised text are plain text, not Markdown (docs/formats.md, "Plain
 * text"): a line starting `#`, `1.`, `*`, `>`, `|`, `<` or `[1]:` stays in its chunk as written and makes no heading;
 * Markdown keeps its structure. The PDF was made by LibreOffice from the text file (test/fixtures/files/make.sh) and
 * its lines are checked against poppler's pdftotext of it; the expected chunks are the source lines themselves.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { readDocumentFile } from '../../src/corpus/files.js'
import { markHeadings } from '../../src/corpus/formats/pdf.js'
import { escapeHeadingMark, unescapeHeadingMark } from '../../src/corpus/plain-text.js'

const FILES = join(import.meta.dirname, '../fixtures/files')
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** Lines Markdown reads as structure: front matter, a heading, lists, a quote, a table, HTML, a script, a link definition, a comment, a rule. */
const TEXT = [
  '---', 'id: not-an-id', 'title: 不是标题', '---',
  '# 5 号楼 3 层', '配电室位于走廊尽头，钥匙在值班室。', '', '1. 先断开总闸', '* 再挂警示牌', '> 巡检记录见附录', '',
  '|a|b|', '|-|-|', '|1|2|', '', '<b>', '注意', '</b>', '', '<script>alert(1)</script>', '', '[1]: 见附录', '', '<!-- 备注 -->', '', '***', '', '电压 ==== 380V', '======'
].join('\n')

async function readFileDocument(name: string, text: string) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-plain-'))
  dirs.push(dir)
  await writeFile(join(dir, name), text)
  const read = await readDocumentFile(join(dir, name), dir)
  if (read.outcome !== 'read') throw new Error(`${name}: ${read.outcome}: ${read.reason}`)
  return read.document
}

const nonBlankLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '')

describe('a .txt file is plain text', () => {
  it('every line stays in the chunks as written; no heading, no front matter, nothing dropped', async () => {
    const doc = await readFileDocument('lines.txt', TEXT)
    expect(doc.id).toBe('lines')
    expect(doc.title).toBeUndefined()
    const chunks = chunkDocument(doc)
    expect(chunks.every((c) => c.heading_path === undefined && c.anchor === undefined)).toBe(true)
    // the chunks hold every line, in order, each whole
    expect(nonBlankLines(chunks.map((c) => c.text).join('\n'))).toEqual(nonBlankLines(TEXT))
  })

  it('its title is its first line when that reads as a title (a letter, at most 50 characters, not a sentence) and text follows', async () => {
    expect((await readFileDocument('oncall.txt', '\n值班说明\n夜间告警由二线值班处理。\n')).title).toBe('值班说明')
    expect((await readFileDocument('ops.txt', 'Night shift rules\r\nAlerts go to the second line.')).title).toBe('Night shift rules')
    // a first line written as a Markdown heading: the title without its marks, the line kept in the text as written
    const marked = await readFileDocument('marked.txt', '## 机房值班记录\n夜班每两小时巡检一次。')
    expect(marked.title).toBe('机房值班记录')
    expect(marked.text.split('\n')[0]).toBe('## 机房值班记录')
    // prose, a line alone, a rule, a line over 50 characters: no title
    expect((await readFileDocument('prose.txt', '夜间告警由二线值班处理。\n白天由一线处理。')).title).toBeUndefined()
    expect((await readFileDocument('alone.txt', '值班说明')).title).toBeUndefined()
    expect((await readFileDocument('rule.txt', '=====\n正文')).title).toBeUndefined()
    expect((await readFileDocument('long.txt', `${'长'.repeat(51)}\n正文`)).title).toBeUndefined()
    expect((await readFileDocument('fifty.txt', `${'长'.repeat(50)}\n正文`)).title).toBe('长'.repeat(50))
  })

  it('the same text as Markdown keeps Markdown\'s reading: front matter, a heading, the script and the definition left out', async () => {
    const doc = await readFileDocument('lines.md', TEXT)
    expect(doc.id).toBe('not-an-id')
    expect(doc.title).toBe('不是标题')
    const chunks = chunkDocument(doc)
    expect(chunks[0]!.heading_path).toEqual(['5 号楼 3 层'])
    const all = chunks.map((c) => c.text).join('\n')
    expect(all).not.toContain('alert(1)')
    expect(all).not.toContain('[1]: 见附录')
  })
})

describe('a PDF\'s text is plain text', () => {
  it('LibreOffice\'s PDF of those lines: each line pdftotext reads is in a chunk as written, none a heading', async () => {
    const source = nonBlankLines(await readFile(join(FILES, 'sources/plain-lines.txt'), 'utf8'))
    const poppler = nonBlankLines((await readFile(join(FILES, 'plain-lines.pdftotext.txt'), 'utf8')).replace(/\f/g, ''))
    // poppler reads the PDF as the source it was made from, line for line: the PDF holds these lines
    expect(poppler).toEqual(source)
    const read = await readDocumentFile(join(FILES, 'plain-lines.pdf'), FILES)
    if (read.outcome !== 'read') throw new Error(read.reason)
    expect(read.document.metadata?.format).toBe('pdf')
    const chunks = chunkDocument(read.document)
    expect(chunks.every((c) => c.heading_path === undefined)).toBe(true)
    expect(nonBlankLines(chunks.map((c) => c.text).join('\n')).map((l) => l.trim())).toEqual(poppler)
    expect(chunks[0]!.page).toBe(1)
  })

  it('outline headings stay headings; a line of the page starting # beside them is text, as read', () => {
    const [page] = markHeadings(['# 5 号楼\n总则\n\\# 转义\n正文'], [{ title: '总则', depth: 0, page: 0 }])
    expect(page).toBe('\\# 5 号楼\n# 总则\n\\\\# 转义\n正文')
    const chunks = chunkDocument({ id: 'p', text: page!, metadata: { format: 'pdf', pages: 1 } })
    expect(chunks.map((c) => [c.text, c.heading_path])).toEqual([['# 5 号楼', undefined], ['# 总则\n\n\\# 转义\n正文', ['总则']]])
  })

  it('the escape of a line that could read as a heading mark is undone exactly', () => {
    for (const line of ['# a', '## b', '\\# c', '\\\\## d', 'e # f', '  # g', '\\ h', '']) {
      expect(unescapeHeadingMark(escapeHeadingMark(line))).toBe(line)
    }
  })
})

describe('an image\'s recognised text is plain text', () => {
  it('a recognised line starting # is text, in no heading path', () => {
    const text = '# 5 号楼 3 层\n配电室\n=====\n<b>注意</b>'
    const [chunk, ...more] = chunkDocument({ id: 'scan', text, metadata: { format: 'png', ocr: true } })
    expect(more).toEqual([])
    expect(chunk!.heading_path).toBeUndefined()
    expect(chunk!.text).toBe(text)
  })
})
