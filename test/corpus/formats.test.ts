/**
 * Each format read into text a document holds: the files were made by real tools (test/fixtures/files/make.sh:
 * LibreOffice for the PDF and the DOCX, from the HTML sources beside them), and what is expected comes from those
 * sources and from poppler's pdftotext, not from the reader under test.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents.js'
import { readDocumentFile } from '../../src/corpus/files.js'
import { htmlToMarkdown } from '../../src/corpus/formats/html.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'

const FILES = join(import.meta.dirname, '../fixtures/files')
const squeeze = (s: string) => s.replace(/\s+/g, '')

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
    const pages = r.text.split('\f')
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
      const text = squeeze(c.text)
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
