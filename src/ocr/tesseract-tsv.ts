import type { OcrBlock, OcrLine, OcrResult } from './port.js'

/** Han and kana: written without spaces between words. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc]/u
/** CJK and full-width punctuation, which takes no space on either side. */
const CJK_PUNCTUATION = /[\u3000-\u303f\uff00-\uffef]/u

/** The space between two recognised words: none between Han or kana, or beside CJK punctuation. */
function joinWords(words: readonly string[]): string {
  let out = ''
  for (const word of words) {
    if (out !== '') {
      const before = out.at(-1)!
      const after = word[0]!
      const tight = CJK_PUNCTUATION.test(before) || CJK_PUNCTUATION.test(after) || (UNSPACED.test(before) && UNSPACED.test(after))
      if (!tight) out += ' '
    }
    out += word
  }
  return out
}

interface Word {
  text: string
  conf: number
}

/**
 * Tesseract's TSV output (one row per page, block, paragraph, line and word, in the order its layout analysis reads
 * them: column by column) as blocks of lines. A block is one of its paragraphs. Confidence is 0 to 1, each word
 * weighted by its characters; rows without a word (conf -1) carry none.
 */
export function parseTesseractTsv(tsv: string): OcrResult {
  const blocks: OcrBlock[] = []
  let width = 0
  let height = 0
  let block: OcrBlock | undefined
  let line: (OcrLine & { words: Word[] }) | undefined
  let blockKey = ''
  let weighted = 0
  let totalChars = 0
  const finishLine = () => {
    if (!line) return
    const words = line.words
    const chars = words.reduce((n, w) => n + [...w.text].length, 0)
    if (chars > 0) {
      const sum = words.reduce((s, w) => s + w.conf * [...w.text].length, 0)
      weighted += sum
      totalChars += chars
      const confidence = sum / chars / 100
      block!.lines.push({ text: joinWords(words.map((w) => w.text)), confidence, box: line.box })
    }
    line = undefined
  }
  for (const row of tsv.split('\n').slice(1)) {
    const cells = row.split('\t')
    if (cells.length < 12) continue
    const [level, , blockNum, parNum, , , left, top, w, h, conf] = cells.slice(0, 11).map(Number) as number[]
    const text = cells.slice(11).join('\t').trim()
    if (level === 1) {
      width = w!
      height = h!
    } else if (level === 3) {
      finishLine()
      const key = `${blockNum}.${parNum}`
      if (key !== blockKey) {
        if (block && block.lines.length > 0) blocks.push(block)
        block = { lines: [] }
        blockKey = key
      }
    } else if (level === 4) {
      finishLine()
      line = { text: '', confidence: 0, box: { left: left!, top: top!, width: w!, height: h! }, words: [] }
    } else if (level === 5 && line && text !== '' && conf! >= 0) {
      line.words.push({ text, conf: conf! })
    }
  }
  finishLine()
  if (block && block.lines.length > 0) blocks.push(block)
  const confidence = totalChars > 0 ? weighted / totalChars / 100 : 0
  const text = blocks.map((b) => b.lines.map((l) => l.text).join('\n')).join('\n\n')
  return { text, confidence, blocks, width, height }
}
