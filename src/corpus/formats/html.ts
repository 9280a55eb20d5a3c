import type { Element, ElementContent, Root, RootContent } from 'hast'
import { fromHtml } from 'hast-util-from-html'
import { toMdast } from 'hast-util-to-mdast'
import { gfmToMarkdown } from 'mdast-util-gfm'
import { toMarkdown } from 'mdast-util-to-markdown'
import { decodeBytes } from './encoding.js'
import { refused, type FileReading } from './reading.js'

/** Elements that are not a page's content: code, styling, site navigation and chrome, forms, embedded frames. */
const NOT_CONTENT = new Set(['script', 'style', 'noscript', 'template', 'nav', 'header', 'footer', 'aside', 'form', 'button', 'iframe', 'svg', 'canvas', 'dialog'])

/**
 * An HTML page as Markdown: its main content (`<main>`, else the first `<article>`, else `<body>`) without
 * {@link NOT_CONTENT}, with `<h1>`–`<h6>` as `#` headings, lists, GFM tables and fenced code kept. A table that holds
 * headings or other tables lays a page out: its cells' content is kept in order, not made a Markdown table.
 * `title` is the `<title>` when the content has no `<h1>` (the chunker takes the first `#` heading otherwise).
 */
export function htmlToMarkdown(html: string): { markdown: string; title?: string } {
  const tree = fromHtml(html)
  const main = find(tree, (e) => e.tagName === 'main') ?? find(tree, (e) => e.tagName === 'article') ?? find(tree, (e) => e.tagName === 'body')
  const content: Root = { type: 'root', children: main ? clean(main.children) : clean(tree.children as ElementContent[]) }
  const markdown = toMarkdown(toMdast(content), { extensions: [gfmToMarkdown()] }).trim()
  const titleElement = find(tree, (e) => e.tagName === 'title')
  const title = titleElement ? textOf(titleElement).trim() : ''
  const hasH1 = find(content, (e) => e.tagName === 'h1') !== undefined
  return { markdown, ...(title && !hasH1 ? { title } : {}) }
}

/** An `.html`/`.htm` file: bytes decoded (a `<meta charset>` counts when they are not UTF-8), then {@link htmlToMarkdown}. */
export function readHtml(bytes: Uint8Array): FileReading {
  const decoded = decodeBytes(bytes, declaredCharset(bytes))
  if ('binary' in decoded) return refused(decoded.binary)
  const { markdown, title } = htmlToMarkdown(decoded.text)
  return { outcome: 'read', text: markdown, ...(title ? { title } : {}), metadata: { format: 'html', encoding: decoded.encoding } }
}

/** `<meta charset="…">` or `<meta http-equiv="Content-Type" content="…; charset=…">` in the first 4 KiB. */
export function declaredCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 4096)).toString('latin1')
  return /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1]
}

function clean(children: ElementContent[]): ElementContent[] {
  const out: ElementContent[] = []
  for (const child of children) {
    if (child.type === 'comment') continue
    if (child.type !== 'element') { out.push(child); continue }
    if (NOT_CONTENT.has(child.tagName)) continue
    if (child.tagName === 'table' && find(child, (e) => e !== child && (/^h[1-6]$/.test(e.tagName) || e.tagName === 'table'))) {
      out.push(...layoutCells(child).flatMap((cell) => clean(cell.children)))
      continue
    }
    out.push({ ...child, children: clean(child.children) })
  }
  return out
}

/** The cells of a layout table, in document order, as blocks. */
function layoutCells(table: Element): Element[] {
  const cells: Element[] = []
  const visit = (e: Element) => {
    for (const c of e.children) {
      if (c.type !== 'element') continue
      if (c.tagName === 'td' || c.tagName === 'th') cells.push({ ...c, tagName: 'div' })
      else visit(c)
    }
  }
  visit(table)
  return cells
}

function find(node: Root | Element, test: (e: Element) => boolean): Element | undefined {
  for (const child of node.children as RootContent[]) {
    if (child.type !== 'element') continue
    if (test(child)) return child
    const inner = find(child, test)
    if (inner) return inner
  }
  return undefined
}

function textOf(node: Element): string {
  return node.children.map((c) => (c.type === 'text' ? c.value : c.type === 'element' ? textOf(c) : '')).join('')
}
