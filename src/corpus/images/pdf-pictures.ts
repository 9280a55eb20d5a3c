/**
 * The pictures of a PDF's pages: each page's operator list walked (pdf.js, through unpdf) to place every image on the
 * page (src/corpus/images/pdf-placement.ts). Where the images cover at least {@link SCAN_COVERAGE} of the page, they
 * are the page's scan, not pictures of it; elsewhere every painted image XObject is a figure, decoded to pixels and
 * encoded here as PNG by sharp, with its page, the caption line of that page that opens like a caption (the n-th
 * picture of a page takes the n-th such line), the headings above it and the lines around its caption.
 */
import { getResolvedPDFJS, type getDocumentProxy } from 'unpdf'
import { CAPTION_OPENING, contextAround } from './captions.js'
import type { ImageInput, ImageProblem } from './image-input.js'
import { coverage, placeImages, type Box, type PlacedImage } from './pdf-placement.js'
import { unescapeHeadingMark } from '../plain-text.js'

/**
 * The share of a page its images must cover together to be the page's scan. A scanner's or img2pdf's page image
 * covers all of it (1.0), an A4 scan fitted onto a Letter page 0.915; a figure inside A4's default 2 cm margins at
 * most 0.70 (docs/formats.md, "Scans and figures", has the files measured).
 */
const SCAN_COVERAGE = 0.85

type PdfProxy = Awaited<ReturnType<typeof getDocumentProxy>>

/**
 * Whether a PDF's bytes hold an image XObject at all. An image XObject is a stream, whose dictionary (with its
 * `/Subtype /Image`) the format never lets into a compressed object stream, nor encrypts: a file without the name holds
 * no picture and no scan made of XObjects, and its pages' operator lists (which load every font, the cost of
 * bench/pdf-pictures-cost.ts) need not be walked. `/ImageB` of a ProcSet array does not count.
 */
export function mayHoldPictures(bytes: Uint8Array): boolean {
  return /\/Subtype\s*\/Image(?![A-Za-z0-9#])/.test(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'))
}

/** A page's images placed: whether they are its scan, and otherwise its figures (its image XObjects, in painting order). */
export interface PageImages {
  scan: boolean
  /** The share of the page its images cover together (0 to 1). */
  coverage: number
  figures: PlacedImage[]
}

/** Page `n`'s images placed by its operator list; a list that cannot be read throws. */
export async function placePageImages(pdf: PdfProxy, n: number): Promise<PageImages> {
  const page = await pdf.getPage(n)
  const { OPS } = await getResolvedPDFJS()
  const placed = placeImages(await page.getOperatorList(), OPS)
  const covered = coverage(placed.map((p) => p.box), page.view as Box)
  const scan = covered >= SCAN_COVERAGE
  return { scan, coverage: covered, figures: scan ? [] : placed.filter((p) => p.kind === 'xobject') }
}

/**
 * The figures of every page, and each page's images placed (`layouts`, by page from 1; a page whose operator list
 * cannot be read is reported and has none). `pages`: each page's text as the reader made it (`#` headings marked from
 * the outline).
 */
export async function picturesOfPdf(pdf: PdfProxy, pages: readonly string[]): Promise<{ images: ImageInput[]; problems: ImageProblem[]; layouts: Map<number, PageImages> }> {
  const images: ImageInput[] = []
  const problems: ImageProblem[] = []
  const layouts = new Map<number, PageImages>()
  const { default: sharp } = await import('sharp')
  const headings: string[] = []
  for (let n = 1; n <= pages.length; n++) {
    const lines = pages[n - 1]!.split('\n')
    const prose = (from: number, to: number) => lines.slice(Math.max(0, from), to).filter((l) => !/^#{1,6} /.test(l)).map(unescapeHeadingMark).join(' ')
    const headingsAt = (line: number) => {
      const path = [...headings]
      for (const l of lines.slice(0, line)) {
        const m = /^(#{1,6}) (.*)$/.exec(l)
        if (m) path.splice(m[1]!.length - 1, path.length, m[2]!.trim())
      }
      return path
    }
    let found: Array<{ data: Uint8Array; width: number; height: number; channels: 1 | 3 | 4 }> = []
    try {
      const layout = await placePageImages(pdf, n)
      layouts.set(n, layout)
      found = await decoded(pdf, n, layout.figures)
    } catch (error) {
      problems.push({ src: `page ${n}`, reason: `its pictures cannot be read: ${(error as Error).message}` })
    }
    const captionLines = lines.flatMap((l, i) => (CAPTION_OPENING.test(l) ? [i] : []))
    for (const [i, image] of found.entries()) {
      let png: Buffer
      try {
        png = await sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), {
          raw: { width: image.width, height: image.height, channels: image.channels }
        }).png().toBuffer()
      } catch (error) {
        problems.push({ src: `page ${n}`, reason: `picture ${i + 1} cannot be encoded: ${(error as Error).message}` })
        continue
      }
      const at = captionLines[i]
      const caption = at !== undefined ? lines[at]!.trim() : undefined
      const path = headingsAt(at ?? lines.length)
      const context = at !== undefined ? contextAround(prose(at - 3, at), prose(at + 1, at + 4)) : contextAround('', prose(0, lines.length))
      images.push({
        data: png.toString('base64'), page: n,
        ...(caption ? { caption } : {}),
        ...(path.length > 0 ? { heading_path: path } : {}),
        ...(context ? { context } : {})
      })
    }
    headings.splice(0, headings.length, ...headingsAt(lines.length))
  }
  return { images, problems, layouts }
}

/**
 * The pixels of page `n`'s figures, as pdf.js decoded them (the page's objects, or the document's for a key `g_…`);
 * one whose pixels are not 1, 3 or 4 bytes each (a form sharp does not take raw) is left out.
 */
async function decoded(pdf: PdfProxy, n: number, figures: readonly PlacedImage[]) {
  const page = await pdf.getPage(n)
  const out: Array<{ data: Uint8Array; width: number; height: number; channels: 1 | 3 | 4 }> = []
  for (const { key } of figures) {
    const objects = key!.startsWith('g_') ? page.commonObjs : page.objs
    const image = await new Promise<{ data?: Uint8Array; width?: number; height?: number } | null>((resolve) => objects.get(key!, resolve))
    if (!image?.data || !image.width || !image.height) continue
    const channels = image.data.length / (image.width * image.height)
    if (channels === 1 || channels === 3 || channels === 4) out.push({ data: image.data, width: image.width, height: image.height, channels })
  }
  return out
}
