/**
 * Each format read into text a document holds: the files were made by real tools (test/fixtures/files/make.sh:
 * LibreOffice for the PDF and the DOCX, from the HTML sources beside them), and what is expected comes from those
 * sources and from poppler's pdftotext, not from the reader under test.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import JSZip from 'jszip'
import { describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { readDocumentFile } from '../../src/corpus/files.js'
import { htmlToMarkdown } from '../../src/corpus/formats/html.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { readDocx, titleLike } from '../../src/corpus/formats/docx.js'
import { markHeadings } from '../../src/corpus/formats/pdf.js'

const FILES = join(import.meta.dirname, '../fixtures/files')
const squeeze = (s: string) => s.replace(/\s+/g, '')
/** A text less the `#` marks the PDF reader puts on the lines its outline names (poppler's text has none). */
const unmarked = (s: string) => s.replace(/^#{1,6} /gm, '')

/** The outline of handbook.pdf as poppler's pdftohtml reads it (make.sh): each entry's depth, title and page. */
async function popplerOutline(): Promise<Array<{ depth: number; title: string; page: number }>> {
  const xml = await readFile(join(FILES, 'handbook.outline.xml'), 'utf8')
  const out: Array<{ depth: number; title: string; page: number }> = []
  let depth = -1
  for (const m of xml.matchAll(/<outline>|<\/outline>|<item page="(\d+)">([^<]*)<\/item>/g)) {
    if (m[0] === '<outline>') depth++
    else if (m[0] === '</outline>') depth--
    else out.push({ depth, title: m[2]!, page: Number(m[1]) })
  }
  return out
}

async function read(name: string) {
  const r = await readFileByFormat(join(FILES, name))
  if (r.outcome !== 'read') throw new Error(`${name}: ${r.outcome}: ${r.reason}`)
  return r
}

/** The headings of an HTML source, as `#` lines of their level. */
async function sourceHeadings(name: string): Promise<string[]> {
  const html = await readFile(join(FILES, 'sources', name), 'utf8')
  return [...html.matchAll(/<h([1-6])[^>]*>([^<]*)<\/h\1>/g)].map((m) => `${'#'.repeat(Number(m[1]))} ${m[2]}`)
}

describe('PDF', () => {
  it('gives the text of each page as pdftotext reads it, pages split by a form feed, and the page count', async () => {
    const r = await read('manual.pdf')
    const poppler = (await readFile(join(FILES, 'manual.pdftotext.txt'), 'utf8')).split('\f').filter((p) => p.trim() !== '')
    expect(poppler).toHaveLength(2)
    const pages = unmarked(r.text).split('\f')
    expect(pages.map(squeeze)).toEqual(poppler.map(squeeze))
    expect(r.metadata).toEqual({ format: 'pdf', pages: 2 })
  })

  it('takes its title from the document information (the source\'s <title>)', async () => {
    expect((await read('manual.pdf')).title).toBe('设备维护手册')
  })

  /** The pages (from 1) whose text, as `pdftotext -f N -l N` gives it, holds `text` (whitespace ignored). */
  async function pagesHolding(text: string): Promise<number[]> {
    const out: number[] = []
    for (let n = 1; n <= 4; n++) {
      if (squeeze(await readFile(join(FILES, `handbook.page-${n}.txt`), 'utf8')).includes(squeeze(text))) out.push(n)
    }
    return out
  }

  async function onePageHolding(part: (k: number) => string): Promise<number[]> {
    for (let k = 12; k >= 4; k--) {
      const pages = await pagesHolding(part(k))
      if (pages.length === 1) return pages
    }
    throw new Error(`no page alone holds ${part(12)}`)
  }

  it('gives every chunk of a PDF the page it starts on, and the page it ends on when later', async () => {
    const r = await read('handbook.pdf')
    const chunks = chunkDocument({ id: 'handbook', text: r.text, metadata: { ...r.metadata } })
    expect(chunks.length).toBeGreaterThan(2)
    const pagesSeen = new Set<number>()
    for (const c of chunks) {
      const text = squeeze(unmarked(c.text))
      // the page its first and its last characters are on, as poppler reads each page: the longest head (tail) of at
      // most a dozen characters that one page alone holds
      const first = await onePageHolding((k) => text.slice(0, k))
      const last = await onePageHolding((k) => text.slice(-k))
      expect(c.page, c.id).toBe(first[0])
      expect(c.page_end, c.id).toBe(last[0]! > first[0]! ? last[0] : undefined)
      for (let p = c.page!; p <= (c.page_end ?? c.page!); p++) pagesSeen.add(p)
    }
    expect([...pagesSeen].sort()).toEqual([1, 2, 3, 4])
  })

  it('makes the lines its outline names # headings of their depth, so each chunk carries its heading path and starts on its section\'s page', async () => {
    const outline = await popplerOutline()
    expect(outline.map((e) => e.title)).toEqual((await sourceHeadings('handbook.html')).map((h) => h.replace(/^#+ /, '')))
    const r = await read('handbook.pdf')
    expect(r.text.split('\n').filter((l) => /^#{1,6} /.test(l))).toEqual(outline.map((e) => `${'#'.repeat(e.depth + 1)} ${e.title}`))
    const chunks = chunkDocument({ id: 'handbook', text: r.text, metadata: { ...r.metadata } })
    const sections = outline.filter((e) => e.depth === 1)
    expect(chunks.map((c) => c.heading_path)).toEqual(sections.map((e) => [outline[0]!.title, e.title]))
    expect(chunks.map((c) => c.page)).toEqual(sections.map((e) => e.page))
  })

  it('marks an outline entry only where a line of its page reads as its title, in order', () => {
    const pages = ['手册\n概述\n正文提到概述。', '安装\n步骤一。']
    const outline = [{ title: '手册', depth: 0, page: 0 }, { title: '概述', depth: 1, page: 0 }, { title: '不存在的节', depth: 1, page: 1 }, { title: '安 装', depth: 1, page: 1 }]
    expect(markHeadings(pages, outline)).toEqual(['# 手册\n## 概述\n正文提到概述。', '## 安装\n步骤一。'])
    // an entry whose page is unknown is looked for from the entry before it on
    expect(markHeadings(['甲\n乙', '丙\n丁'], [{ title: '乙', depth: 0 }, { title: '丁', depth: 0 }])).toEqual(['甲\n# 乙', '丙\n# 丁'])
  })

  it('gives a one-page PDF\'s chunks page 1, and a text that is not paged none', async () => {
    const pdf = chunkDocument({ id: 'p', text: '只有一页的说明。', metadata: { format: 'pdf', pages: 1 } })
    expect(pdf.map((c) => [c.page, c.page_end])).toEqual([[1, undefined]])
    expect(chunkDocument({ id: 't', text: '# 标题\n\n正文。' })[0]!.page).toBeUndefined()
  })
})

describe('DOCX', () => {
  it('keeps the Word headings as # headings of their level, in order', async () => {
    const r = await read('policy.docx')
    const headings = r.text.split('\n').filter((l) => /^#{1,6} /.test(l))
    expect(headings).toEqual(await sourceHeadings('policy.html'))
    expect(r.text).toContain('住宿费每晚不超过五百元，超出部分由个人承担。')
    expect(r.metadata).toEqual({ format: 'docx' })
  })

  it('becomes a document titled by its first heading, whose chunks start at the sections', async () => {
    const r = await readDocumentFile(join(FILES, 'policy.docx'), FILES)
    if (r.outcome !== 'read') throw new Error(r.reason)
    const chunks = chunkDocument(r.document)
    expect(chunks[0]!.title).toBe('差旅报销制度')
    expect(chunks.some((c) => c.text.startsWith('## 报销标准'))).toBe(true)
  })

  /** What the test expects of each DOCX made from sources/<name>.html, written from that source. */
  const titled: Array<[file: string, title: string, why: string]> = [
    ['report-core-title.docx', '季度安全检查报告', 'its core properties (the source\'s <title>), before its first paragraph'],
    ['memo-plain.docx', '周例会纪要', 'its first paragraph, short and bold, without heading styles or a core title'],
    ['notes-untitled.docx', 'notes-untitled', 'its file name: no core title, and its first paragraph is a sentence']
  ]

  it.each(titled)('%s is titled %s: %s, and every chunk carries the title', async (file, title) => {
    const r = await readDocumentFile(join(FILES, file), FILES)
    if (r.outcome !== 'read') throw new Error(r.reason)
    expect(r.document.title).toBe(title)
    const chunks = chunkDocument(r.document)
    expect(chunks.length).toBeGreaterThan(0)
    for (const c of chunks) expect(c.title).toBe(title)
  })

  it('reads the body of a DOCX whose core properties are not well-formed XML, titled as if it had none', async () => {
    // report-core-title.docx (LibreOffice) with its docProps/core.xml cut in the middle of an element
    const zip = await JSZip.loadAsync(await readFile(join(FILES, 'report-core-title.docx')))
    const core = await zip.file('docProps/core.xml')!.async('string')
    zip.file('docProps/core.xml', core.slice(0, core.indexOf('<dc:title>') + 6))
    const r = await readDocx(await zip.generateAsync({ type: 'uint8array' }), 'broken-core')
    if (r.outcome !== 'read') throw new Error(r.reason)
    expect(r.title).not.toBe('季度安全检查报告')
    expect(r.text).toBe((await read('report-core-title.docx')).text)
  })

  it('takes a first paragraph as a title only when it reads as one', () => {
    expect(titleLike('**周例会纪要**\n\n时间：周一。')).toBe('周例会纪要')
    expect(titleLike('今天确认了到货时间。\n\n收货时核对型号。')).toBeUndefined()
    expect(titleLike('- 一项\n\n正文。')).toBeUndefined()
    expect(titleLike('只有一段')).toBeUndefined()
    expect(titleLike(`${'长'.repeat(51)}\n\n正文。`)).toBeUndefined()
  })
})

describe('HTML', () => {
  it('keeps the main content with its headings, code and table, and drops script, style, header, nav, aside and footer', async () => {
    const r = await read('page.html')
    expect(r.text.split('\n').filter((l) => /^#{1,6} /.test(l))).toEqual(['# 计算属性', '## 计算属性缓存', '### 与方法的区别'])
    expect(r.text).toContain('```js\nconst total = computed(() => items.value.length)\n```')
    expect(r.text).toMatch(/\| computed \| 是 +\|/)
    for (const chrome of ['analytics', 'color: red', '首页', '基础', '相关链接', '示例文档站']) expect(r.text).not.toContain(chrome)
    expect(r.metadata).toEqual({ format: 'html', encoding: 'UTF-8' })
    expect(r.title).toBeUndefined()
  })

  it('without <main> or <article>, takes the body less its script, style, header, nav, aside and footer', () => {
    const html = '<html><head><style>p { color: red }</style></head><body><header>站点名</header><nav><a href="/">首页</a></nav>' +
      '<h1>安装</h1><script>track()</script><p>运行安装脚本。</p><aside>广告</aside><footer>版权所有</footer></body></html>'
    expect(htmlToMarkdown(html).markdown).toBe('# 安装\n\n运行安装脚本。')
  })

  it('takes the <title> as the title when the content has no <h1>', () => {
    expect(htmlToMarkdown('<html><head><title>发布说明</title></head><body><h2>新功能</h2><p>支持 PDF。</p></body></html>'))
      .toEqual({ markdown: '## 新功能\n\n支持 PDF。', title: '发布说明' })
  })

  it('reads a layout table (one holding headings) as its cells in order, not as a Markdown table', () => {
    const html = '<body><table><tr><td><h1>手册</h1><p>第一段。</p></td></tr><tr><td><h2>附录</h2><p>第二段。</p></td></tr></table></body>'
    expect(htmlToMarkdown(html).markdown).toBe('# 手册\n\n第一段。\n\n## 附录\n\n第二段。')
  })
})

describe('Markdown and text', () => {
  it('keeps Markdown as written, front matter included', async () => {
    const r = await read('notes-utf16le-bom.md')
    expect(r.text).toBe(await readFile(join(FILES, 'sources', 'notes-utf16.md'), 'utf8'))
    expect(r.metadata.format).toBe('markdown')
  })
})
