/**
 * The pictures a Markdown text names (`![alt](src "title")`, a raw `<img>`), as {@link ImageInput}s with what the text
 * says about each: alt text, caption, heading path and the sentences around it. HTML and DOCX files are read through
 * Markdown (src/corpus/formats/html.ts, docx.ts), so their `<img>` and `<figcaption>`, and a Word file's pictures (which
 * mammoth gives as `data:` URIs), are found here too.
 */
import type { Heading, Nodes, RootContent } from 'mdast'
import { bodyBlocks, headingInfo, readMarkdown, type MarkdownTree } from '../markdown.js'
import { CAPTION_OPENING, contextAround } from './captions.js'
import type { ImageInput, ImageProblem } from './image-input.js'

/** Reads a picture a document names by a relative path or file URL; throws with the reason when it cannot. */
export type PictureLoader = (src: string) => Promise<Uint8Array>

export interface MarkdownPictures {
  images: ImageInput[]
  problems: ImageProblem[]
  /** The text with every `data:` URI of a picture emptied (`![alt]()`), so that no base64 is indexed as text. */
  text: string
}

interface Found { src: string; alt: string; title?: string; block: RootContent; blockIndex: number; headings: string[] }

const DATA_URI = /^data:([^;,]*)(;base64)?,(.*)$/s

export async function picturesOfMarkdown(markdown: string, load?: PictureLoader): Promise<MarkdownPictures> {
  const tree = readMarkdown(markdown)
  const blocks = bodyBlocks(tree)
  const found: Found[] = []
  const headings: string[] = []
  blocks.forEach((block, blockIndex) => {
    if (block.type === 'heading') {
      const { depth, text } = headingInfo(tree, block as Heading)
      headings.splice(depth - 1, headings.length, text)
      return
    }
    for (const image of imagesIn(block)) found.push({ ...image, block, blockIndex, headings: [...headings] })
  })
  const images: ImageInput[] = []
  const problems: ImageProblem[] = []
  let text = tree.text
  // a paragraph is the caption of one picture only
  const captionBlocks = new Set<number>()
  for (const f of found) {
    const data = await bytesOf(f.src, load).catch((error: unknown) => {
      problems.push({ src: shortSrc(f.src), reason: (error as Error).message })
      return undefined
    })
    if (f.src.startsWith('data:')) text = text.split(f.src).join('')
    if (!data) continue
    const own = blockText(tree, f.block).trim()
    const neighbour = (offset: number): string => {
      const b = blocks[f.blockIndex + offset]
      return b && b.type !== 'heading' ? blockText(tree, b).trim() : ''
    }
    const next = neighbour(1)
    const previous = neighbour(-1)
    const captionAt = f.title?.trim() ? undefined
      : [0, 1, -1].find((offset) => !captionBlocks.has(f.blockIndex + offset) && CAPTION_OPENING.test(neighbour(offset) || (offset === 0 ? own : '')))
    if (captionAt !== undefined) captionBlocks.add(f.blockIndex + captionAt)
    const caption = f.title?.trim() || (captionAt === undefined ? undefined : captionAt === 0 ? own : captionAt === 1 ? next : previous)
    const around = own !== '' && own !== caption ? contextAround(own, '') : contextAround(previous === caption ? '' : previous, next === caption ? '' : next)
    images.push({
      data: Buffer.from(data).toString('base64'),
      ...(f.alt.trim() ? { alt: f.alt.trim() } : {}),
      ...(caption ? { caption: caption.replace(/\s+/g, ' ') } : {}),
      ...(f.headings.length > 0 ? { heading_path: [...f.headings] } : {}),
      ...(around ? { context: around } : {})
    })
  }
  return { images, problems, text }
}

/** The images of a block, in order: Markdown images and raw `<img>` tags. */
function imagesIn(node: Nodes): Array<{ src: string; alt: string; title?: string }> {
  if (node.type === 'image') return [{ src: node.url, alt: node.alt ?? '', ...(node.title ? { title: node.title } : {}) }]
  if (node.type === 'html') {
    return [...node.value.matchAll(/<img\b[^>]*>/gi)].flatMap((m) => {
      const src = attribute(m[0], 'src')
      return src ? [{ src, alt: attribute(m[0], 'alt') ?? '', ...(attribute(m[0], 'title') ? { title: attribute(m[0], 'title')! } : {}) }] : []
    })
  }
  return 'children' in node ? (node.children as Nodes[]).flatMap(imagesIn) : []
}

function attribute(tag: string, name: string): string | undefined {
  return new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag)?.slice(1).find((v) => v !== undefined)
}

/** A block's plain text, images left out. */
function blockText(tree: MarkdownTree, node: Nodes): string {
  if (node.type === 'image' || node.type === 'html') return ''
  if ('value' in node) return node.value
  if ('children' in node) return (node.children as Nodes[]).map((c) => blockText(tree, c)).join(node.type === 'list' || node.type === 'table' ? ' ' : '')
  return ''
}

async function bytesOf(src: string, load: PictureLoader | undefined): Promise<Uint8Array> {
  const data = DATA_URI.exec(src)
  if (data) {
    if (!data[2]) return new Uint8Array(Buffer.from(decodeURIComponent(data[3]!), 'utf8'))
    return new Uint8Array(Buffer.from(data[3]!, 'base64'))
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(src) && !src.startsWith('file://')) throw new Error('a remote picture is not fetched')
  if (!load) throw new Error('a picture named by path is read only when the document is read from a file (folder ingest, the CLI)')
  return load(src)
}

function shortSrc(src: string): string {
  return src.startsWith('data:') ? `${src.slice(0, 40)}…` : src
}
