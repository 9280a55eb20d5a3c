/**
 * Every relative link in README.md, docs/ and the measurement logs under bench/results/ resolves: the file (or folder)
 * exists, and an anchor names a heading of the target as GitHub renders it (github-slugger, duplicates numbered).
 * Links are read from the Markdown syntax tree, so a link inside a code block is not one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import GithubSlugger from 'github-slugger'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { toString } from 'mdast-util-to-string'
import { gfm } from 'micromark-extension-gfm'
import { describe, expect, it } from 'vitest'

type Node = { type: string; url?: string; depth?: number; children?: Node[]; value?: string }

function tree(file: string): Node {
  return fromMarkdown(readFileSync(file, 'utf8'), { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }) as Node
}

function walk(node: Node, visit: (n: Node) => void): void {
  visit(node)
  for (const child of node.children ?? []) walk(child, visit)
}

const anchorCache = new Map<string, Set<string>>()
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file)
  if (anchors) return anchors
  anchors = new Set()
  const slugger = new GithubSlugger()
  walk(tree(file), (n) => {
    if (n.type === 'heading') anchors!.add(slugger.slug(toString(n)))
    // an explicit <a id="…"> or name="…" in HTML is an anchor too
    if (n.type === 'html') for (const [, id] of (n.value ?? '').matchAll(/\b(?:id|name)="([^"]+)"/g)) if (id) anchors!.add(id)
  })
  anchorCache.set(file, anchors)
  return anchors
}

/** The broken relative links of the Markdown files given, as `file: url (why)`. */
function brokenLinks(root: string, files: string[]): string[] {
  const broken: string[] = []
  for (const file of files) {
    walk(tree(file), (n) => {
      if ((n.type !== 'link' && n.type !== 'image' && n.type !== 'definition') || n.url === undefined) return
      const url = n.url
      if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith('//')) return // http:, mailto: …
      const [pathPart, anchor] = url.split('#', 2) as [string, string | undefined]
      const target = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart))
      const where = `${relative(root, file)}: ${url}`
      if (!existsSync(target)) return void broken.push(`${where} (no such file)`)
      if (anchor === undefined || anchor === '') return
      if (statSync(target).isDirectory() || !target.endsWith('.md')) return void broken.push(`${where} (an anchor into a non-Markdown target)`)
      if (!anchorsOf(target).has(decodeURIComponent(anchor))) broken.push(`${where} (no heading #${anchor})`)
    })
  }
  return broken
}

function markdownIn(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name))
    .sort()
}

describe('links in the docs', () => {
  it('every relative link of README.md, docs/ and bench/results/ resolves to a file and a heading', () => {
    const root = process.cwd()
    const files = [join(root, 'README.md'), ...markdownIn(join(root, 'docs')), ...markdownIn(join(root, 'bench/results'))]
    expect(files.length).toBeGreaterThan(20)
    expect(brokenLinks(root, files)).toEqual([])
  })

  it('finds a missing file, a missing heading and a same-page anchor that names no heading, and ignores code and URLs', () => {
    const root = resolve('test/fixtures/doc-links')
    expect(brokenLinks(root, markdownIn(root))).toEqual([
      'docs/a.md: missing.md (no such file)',
      'docs/a.md: b.md#no-such-heading (no heading #no-such-heading)',
      'docs/a.md: #nowhere (no heading #nowhere)',
      'docs/a.md: ../README.md#x (no such file)',
    ])
  })
})
