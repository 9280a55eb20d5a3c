/**
 * Markdown read as CommonMark + GFM (tables, task lists, strikethrough, footnotes) with a leading YAML front
 * matter, through micromark and mdast: the top-level blocks with their places in the text, the front-matter
 * fields, and each heading's plain text and anchor.
 */
import type { Heading, Nodes, Root, RootContent } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { frontmatter } from 'micromark-extension-frontmatter'
import { gfm } from 'micromark-extension-gfm'
import { parse as parseYaml } from 'yaml'

export interface MarkdownTree {
  /** The text the tree's offsets point into: BOM removed, line ends made `\n`. */
  text: string
  root: Root
  /** Fields of the leading front matter (`id`, `title`, `source`, …), scalars as strings. */
  frontMatter: Record<string, string>
  /** Where the body starts in `text`: after the front matter, else 0. */
  bodyStart: number
}

/**
 * The syntax and tree extensions, made once: building them (`gfm()` combines five extensions) on every call cost about
 * twice the parse of a short document itself.
 */
const PARSE_OPTIONS = {
  extensions: [frontmatter(['yaml']), gfm()],
  mdastExtensions: [frontmatterFromMarkdown(['yaml']), gfmFromMarkdown()]
}

export function readMarkdown(source: string): MarkdownTree {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n')
  const root = fromMarkdown(text, PARSE_OPTIONS)
  const first = root.children[0]
  if (first?.type !== 'yaml') return { text, root, frontMatter: {}, bodyStart: 0 }
  const end = first.position!.end.offset!
  return { text, root, frontMatter: frontMatterFields(first.value), bodyStart: text[end] === '\n' ? end + 1 : end }
}

/**
 * The front-matter fields alone, as {@link readMarkdown} finds them: a text whose first line is not a `---` fence has
 * none (front matter opens the document), and is not parsed at all.
 */
export function frontMatterOf(source: string): Record<string, string> {
  return /^\uFEFF?---[ \t]*(?:\r\n?|\n)/.test(source) ? readMarkdown(source).frontMatter : {}
}

/** The top-level fields of a YAML front matter; when YAML refuses it, its `key: value` lines as written. */
function frontMatterFields(yaml: string): Record<string, string> {
  const fields: Record<string, string> = {}
  let value: unknown
  try {
    value = parseYaml(yaml)
  } catch {
    for (const line of yaml.split('\n')) {
      const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line)
      if (m) fields[m[1]!] = m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2')
    }
    return fields
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fields
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') fields[key] = String(v)
  }
  return fields
}

/** The source text of a node. */
export const sourceOf = (tree: MarkdownTree, node: Nodes): string =>
  tree.text.slice(node.position!.start.offset!, node.position!.end.offset!)

/** The plain text of a node: its text and inline code, without markup. */
function plainText(node: Nodes): string {
  if ('value' in node && node.type !== 'html') return node.value
  if ('children' in node) return (node.children as Nodes[]).map(plainText).join('')
  return ''
}

/** A heading attribute block at the end of a heading, `{#id}` (VitePress, Pandoc), maybe with classes after the id. */
const EXPLICIT_ANCHOR = /[ \t]*\{#([^\s{}]+)[^{}\n]*\}[ \t]*$/

export interface HeadingInfo {
  depth: number
  /** Plain text, anchor removed. */
  text: string
  /** Its source line(s), anchor removed. */
  line: string
  /** Explicit `{#id}` when given. */
  explicitAnchor?: string
}

export function headingInfo(tree: MarkdownTree, node: Heading): HeadingInfo {
  const raw = plainText(node)
  const m = EXPLICIT_ANCHOR.exec(raw)
  const text = (m ? raw.slice(0, m.index) : raw).replace(/\s+/g, ' ').trim()
  const source = sourceOf(tree, node)
  // An ATX heading is one line; a setext heading's text line is followed by its `===`/`---` underline.
  const lines = source.split('\n')
  const textLine = node.position!.start.line === node.position!.end.line ? lines.length - 1 : Math.max(0, lines.length - 2)
  lines[textLine] = lines[textLine]!.replace(EXPLICIT_ANCHOR, '')
  return { depth: node.depth, text, line: lines.join('\n'), ...(m ? { explicitAnchor: m[1]! } : {}) }
}

/**
 * GitHub's heading slug: lower case, every character that is not a letter, digit, mark, space, `-` or `_`
 * removed, each space made `-`. A slug already given in the document gets `-1`, `-2`, … (see {@link Slugger}).
 */
function githubSlug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

/** Slugs of one document's headings, in order, made unique as GitHub does. */
export class Slugger {
  private readonly seen = new Map<string, number>()
  slug(text: string): string {
    const base = githubSlug(text)
    let slug = base
    let n = this.seen.get(base) ?? 0
    while (this.seen.has(slug)) slug = `${base}-${++n}`
    this.seen.set(base, n)
    this.seen.set(slug, this.seen.get(slug) ?? 0)
    return slug
  }
}

/** The top-level blocks of the body, front matter excluded. */
export const bodyBlocks = (tree: MarkdownTree): RootContent[] => tree.root.children.filter((c) => c.type !== 'yaml')
