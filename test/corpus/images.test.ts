/**
 * A document's pictures as image records: found in real files (test/fixtures/images/make.sh: ImageMagick pictures,
 * LibreOffice DOCX and PDF), written through the write path beside the document, counted, replaced and deleted with it.
 * What is expected comes from make.sh's sources (captions, alt texts, headings) and from the pictures' own sizes.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDocumentFile } from '../../src/corpus/files.js'
import { mayHoldPictures } from '../../src/corpus/images/pdf-pictures.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

const FILES = join(import.meta.dirname, '../fixtures/images')
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

async function document(name: string) {
  const read = await readDocumentFile(join(FILES, name), FILES)
  if (read.outcome !== 'read') throw new Error(`${name}: ${read.reason}`)
  return read
}

describe('the pictures of a file', () => {
  it('Markdown: a picture by path and one as a data: URI, with alt, caption, heading path and context; remote and missing ones reported', async () => {
    const read = await document('guide.md')
    const images = read.document.images!
    expect(images).toHaveLength(3)
    expect(sha(Buffer.from(images[0]!.data, 'base64'))).toBe(sha(await readFile(join(FILES, 'settings.png'))))
    expect(images[0]).toMatchObject({ alt: '显示设置窗口', caption: '图 1：显示设置，深色模式已打开', heading_path: ['设置手册', '显示'], context: '打开显示设置即可切换深色模式。深色模式在夜间更护眼。' })
    expect(sha(Buffer.from(images[1]!.data, 'base64'))).toBe(sha(await readFile(join(FILES, 'diagram.png'))))
    expect(images[1]).toMatchObject({ caption: '图 2：请求经网关到检索器再到向量库', heading_path: ['设置手册', '架构'], context: '请求先到网关，再到检索器。' })
    // the icon's neighbour is the diagram's caption, taken already
    expect(images[2]).toMatchObject({ alt: '图标' })
    expect(images[2]!.caption).toBeUndefined()
    expect(read.imageProblems?.map((p) => p.src)).toEqual(['https://example.com/remote.png', 'missing.png'])
    // no base64 is left in the text that is indexed
    expect(read.document.text).not.toContain('base64')
    expect(read.document.text.length).toBeLessThan(400)
  })

  it('HTML: <figure> with <figcaption>, and a caption paragraph after a picture', async () => {
    const images = (await document('guide.html')).document.images!
    expect(images.map((i) => [i.alt, i.caption, i.heading_path])).toEqual([
      ['显示设置窗口', '图 1：显示设置，深色模式已打开', ['设置手册', '显示']],
      [undefined, '图 2：请求经网关到检索器再到向量库', ['设置手册', '架构']]
    ])
  })

  it('DOCX made by LibreOffice: its two embedded pictures, byte for byte', async () => {
    const images = (await document('manual.docx')).document.images!
    expect(images.map((i) => sha(Buffer.from(i.data, 'base64')))).toEqual([
      sha(await readFile(join(FILES, 'settings.png'))), sha(await readFile(join(FILES, 'diagram.png')))
    ])
    expect(images.map((i) => i.caption)).toEqual(['图 1：显示设置，深色模式已打开', '图 2：请求经网关到检索器再到向量库'])
  })

  it('PDF made by LibreOffice: its two pictures with their page and the size poppler lists (480x300, 600x220)', async () => {
    const images = (await document('manual.pdf')).document.images!
    const sharp = (await import('sharp')).default
    const sizes = await Promise.all(images.map(async (i) => {
      const m = await sharp(Buffer.from(i.data, 'base64')).metadata()
      return [m.width, m.height]
    }))
    expect(sizes).toEqual([[480, 300], [600, 220]])
    expect(images.map((i) => i.page)).toEqual([1, 1])
    expect(images[1]!.caption).toBe('图 2：请求经网关到检索器再到向量库')
    expect(images.map((i) => i.heading_path)).toEqual([['设置手册', '显示'], ['设置手册', '架构']])
  })
})

// poppler's own count of a PDF's image XObjects: the rows of `pdfimages -list` under its two header lines
const popplerImages = (path: string) => spawnSync('pdfimages', ['-list', path], { encoding: 'utf8' }).stdout.trim().split('\n').length - 2
const hasPoppler = spawnSync('pdfimages', ['-v']).status === 0
if (!hasPoppler) console.warn('corpus/images.test.ts: the pdfimages case is skipped (no poppler-utils; scripts/setup.sh installs it)')

describe.skipIf(!hasPoppler)('which PDFs have their pages walked for pictures', () => {
  const pdfs = [
    join(FILES, 'manual.pdf'), join(FILES, '../files/handbook.pdf'), join(FILES, '../files/manual.pdf'),
    join(FILES, '../ocr/handbook-scanned.pdf'), join(FILES, '../ocr/manual-mixed.pdf')
  ]

  it('the PDFs that hold an image XObject are those poppler lists pictures in (scans, LibreOffice with and without pictures)', async () => {
    const said = await Promise.all(pdfs.map(async (p) => mayHoldPictures(new Uint8Array(await readFile(p)))))
    expect(said).toEqual(pdfs.map((p) => popplerImages(p) > 0))
    // both answers occur, so that the comparison above can tell a reader that always says one from the right one
    expect(new Set(said)).toEqual(new Set([true, false]))
  })

  it('a text-only PDF reads with no pictures and no problems', async () => {
    const read = await readDocumentFile(join(FILES, '../files/handbook.pdf'), join(FILES, '../files'))
    expect(read.outcome).toBe('read')
    if (read.outcome !== 'read') return
    expect(read.document.images).toBeUndefined()
    expect(read.imageProblems).toBeUndefined()
  })
})

describe('image records through the write path', () => {
  let t: TestApp
  beforeAll(async () => { t = await buildTestApp() }, 120_000)
  afterAll(async () => t?.close())

  const ingest = (namespace: string, documents: unknown[]) =>
    t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
  // GET /namespaces lists each namespace with its counts (there is no route of one namespace)
  const counts = async (namespace: string) =>
    (await t.app.inject({ method: 'GET', url: '/namespaces' })).json().namespaces.find((n: { namespace: string }) => n.namespace === namespace) ?? {}

  // what the image collection itself holds, whether or not the namespace is listed
  const held = (namespace: string) => t.app.services.vectors.count(`${t.config.collectionPrefix}images`, namespace)

  it('stores each picture once, skips the icon, counts them, and a second write of the same document changes nothing', async () => {
    const doc = (await document('guide.md')).document
    // the settings screenshot twice in the document is one record
    const twice = { ...doc, images: [...doc.images!, doc.images![0]!] }
    const first = await ingest('pics', [twice])
    expect(first.statusCode).toBe(200)
    expect(first.json().images).toEqual({ written: 2, unchanged: 0, small: 1, removed: 0, refused: [] })
    expect((await counts('pics')).images).toBe(2)
    const again = await ingest('pics', [twice])
    expect(again.json()).toMatchObject({ unchanged: 1, images: { written: 0, unchanged: 2, small: 1, removed: 0 } })
    expect(again.json().generation).toBe(first.json().generation)
  })

  it('a corrupt picture inside a DOCX is reported with its reason and the document and its other picture are written', async () => {
    const doc = (await document('corrupt-picture.docx')).document
    const res = await ingest('corrupt', [doc])
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.documents).toBe(1)
    expect(body.images).toMatchObject({ written: 1, small: 0 })
    expect(body.images.refused).toHaveLength(1)
    expect(body.images.refused[0]).toMatchObject({ document: doc.id, index: 0 })
    expect(body.images.refused[0].reason).toMatch(/corrupt or unreadable image\/png/)
    expect((await counts('corrupt')).images).toBe(1)
  })

  it('a document sent again without a picture loses it; deleting the document deletes its pictures; a drop leaves none', async () => {
    const doc = (await document('manual.docx')).document
    expect((await ingest('gone', [doc])).json().images.written).toBe(2)
    const fewer = await ingest('gone', [{ ...doc, images: doc.images!.slice(1) }])
    expect(fewer.json().images).toMatchObject({ written: 0, unchanged: 1, removed: 1 })
    expect((await counts('gone')).images).toBe(1)
    expect((await t.app.inject({ method: 'DELETE', url: `/documents/${doc.id}?namespace=gone` })).statusCode).toBe(200)
    expect(await held('gone')).toBe(0)
    await ingest('gone', [doc])
    expect((await counts('gone')).images).toBe(2)
    const dropped = await t.app.inject({ method: 'DELETE', url: '/namespaces/gone' })
    expect(dropped.json().removed.images).toBe(2)
    expect(await held('gone')).toBe(0)
  })

  it('a picture that is not base64 is the 400 naming the field', async () => {
    const res = await ingest('bad', [{ id: 'x', text: '正文。', images: [{ data: '***' }] }])
    expect(res.statusCode).toBe(400)
    expect(res.json().message).toMatch(/images\/0\/data/)
  })
})
