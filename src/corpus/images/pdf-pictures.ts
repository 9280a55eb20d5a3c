/**
 * The pictures of a PDF's pages (pdf.js's operator list through unpdf's `extractImages`: every painted image XObject,
 * decoded to pixels, encoded here as PNG by sharp), each with its page, the caption line of that page that opens like a
 * caption (the n-th picture of a page takes the n-th such line), the headings above it and the lines around its caption.
 */
import { extractImages, type getDocumentProxy } from 'unpdf'
import { CAPTION_OPENING, contextAround } from './captions.js'
import type { ImageInput, ImageProblem } from './image-input.js'
import { unescapeHeadingMark } from '../plain-text.js'

type PdfProxy = Awaited<ReturnType<typeof getDocumentProxy>>

/**
 * Whether a PDF's bytes hold an image XObject at all. `extractImages` takes only painted image XObjects, and an image
 * XObject is a stream, whose dictionary (with its `/Subtype /Image`) the format never lets into a compressed object
 * stream, nor encrypts: a file without the name holds no picture, and its pages' operator lists (which load every
 * font, the cost of bench/pdf-pictures-cost.ts) need not be walked. `/ImageB` of a ProcSet array does not count.
 */
export function mayHoldPictures(bytes: Uint8Array): boolean {
  return /\/Subtype\s*\/Image(?![A-Za-z0-9#])/.test(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'))
}

/** `pages`: each page's text as the reader made it (`#` headings marked from the outline). */
export async function picturesOfPdf(pdf: PdfProxy, pages: readonly string[]): Promise<{ images: ImageInput[]; problems: ImageProblem[] }> {
  const images: ImageInput[] = []
  const problems: ImageProblem[] = []
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
    let found: Awaited<ReturnType<typeof extractImages>>
    try {
      found = await extractImages(pdf, n)
    } catch (error) {
      problems.push({ src: `page ${n}`, reason: `its pictures cannot be read: ${(error as Error).message}` })
      found = []
    }
    const captionLines = lines.flatMap((l, i) => (CAPTION_OPENING.test(l) ? [i] : []))
    for (const [i, image] of found.entries()) {
      let png: Buffer
      try {
        png = await sharp(Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength), {
          raw: { width: image.width, height: image.height, channels: image.channels as 1 | 3 | 4 }
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
  return { images, problems }
}
