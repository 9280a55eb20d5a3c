/**
 * What OCR records on a document stays small whatever the page count (the 8,192-byte metadata limit). (That recognised
 * text is read as plain text is test/corpus/plain-text.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { ocrMetadata, type OcrReport } from '../../src/corpus/formats/ocr-pages.js'
import { validateDocumentsBody } from '../../src/corpus/documents-body.js'

const pages = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('OCR metadata', () => {
  it('a 1,000-page scan with every other page of its first 400 flagged fits the metadata limit, the rest counted', () => {
    const all = pages(1, 1000)
    const low = pages(1, 400).filter((p) => p % 2 === 1) // 200 single pages: 200 ranges
    const report: OcrReport = {
      pages: all.filter((p) => p !== 500 && p !== 501), failed: [{ page: 500, reason: 'timeout' }, { page: 501, reason: 'timeout' }],
      lowConfidence: low, pageConfidence: all.filter((p) => p !== 500 && p !== 501).map((p) => (p % 2 === 1 && p <= 400 ? 0.4 : 0.9)), confidence: 0.85
    }
    const metadata = ocrMetadata(report)
    expect(metadata).toMatchObject({ ocr: true, ocr_pages: ['1-499', '502-1000'], ocr_page_count: 998, ocr_confidence: 0.85, ocr_confidence_min: 0.4, ocr_failed_pages: ['500-501'] })
    // 100 ranges kept (pages 1, 3, …, 199), the other 100 single pages counted
    expect(metadata.ocr_low_confidence_pages).toEqual(pages(1, 199).filter((p) => p % 2 === 1).map(String))
    expect(metadata.ocr_low_confidence_pages_more).toBe(100)
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBeLessThan(8192)
    expect(validateDocumentsBody({ documents: [{ id: 'scan', text: '扫描件', metadata: { format: 'pdf', pages: 1000, ...metadata } }] })).toEqual([])
  })

  it('nothing for a report with no page recognised or failed', () => {
    expect(ocrMetadata({ pages: [], failed: [], lowConfidence: [], pageConfidence: [], confidence: 0 })).toEqual({})
  })
})
