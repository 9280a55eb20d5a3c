/**
 * Encodings detected and decoded, junk refused, empty files skipped: the encoded files were written by glibc's
 * iconv from the UTF-8 sources beside them (test/fixtures/files/make.sh), the binary is the head of /bin/true.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { MAX_JUNK_SHARE, textProblem } from '../../src/corpus/text-junk.js'

const FILES = join(import.meta.dirname, '../fixtures/files')

describe('encodings', () => {
  it.each([
    ['notes-gbk.txt', 'notes-zh.txt', 'GB18030'],
    ['notes-big5.txt', 'notes-tw.txt', 'Big5'],
    ['notes-utf16le-bom.md', 'notes-utf16.md', 'UTF-16LE'],
    ['notes-utf16be.txt', 'notes-zh.txt', 'UTF-16BE'],
    ['page.html', undefined, 'UTF-8']
  ])('%s is decoded and its encoding recorded', async (file, source, encoding) => {
    const r = await readFileByFormat(join(FILES, file))
    if (r.outcome !== 'read') throw new Error(r.reason)
    if (source) expect(r.text).toBe(await readFile(join(FILES, 'sources', source), 'utf8'))
    expect(r.metadata.encoding).toBe(encoding)
  })
})

describe('junk and empty files', () => {
  it('refuses a binary file named .md, saying it is binary', async () => {
    const r = await readFileByFormat(join(FILES, 'binary.md'))
    expect(r.outcome).toBe('refused')
    expect(r.outcome !== 'read' && r.reason).toMatch(/^binary data: \d+ NUL bytes in its first 4096$/)
  })

  it('skips an empty file and a whitespace-only one, each with its reason', async () => {
    expect(await readFileByFormat(join(FILES, 'empty.md'))).toEqual({ outcome: 'skipped', reason: 'empty file (0 bytes)' })
    expect(await readFileByFormat(join(FILES, 'blank.txt'))).toEqual({ outcome: 'skipped', reason: 'no text: 7 bytes of whitespace or markup only' })
  })

  it('refuses text past 0.5% of replacement characters, C1 controls or lone surrogates, and takes it up to 0.5%', () => {
    expect(MAX_JUNK_SHARE).toBe(0.005)
    expect(textProblem(`${'文'.repeat(199)}\uFFFD`)).toBeUndefined()
    expect(textProblem(`${'文'.repeat(198)}\u0085\uFFFD`)).toBe('2 of its 200 characters (1%) are replacement or control characters, over the 0.5% ' +
      'allowed (MAX_JUNK_SHARE): binary data, or text read in the wrong encoding')
    expect(textProblem(`${'文'.repeat(199)}\uD800`)).toBeUndefined()
    // a pair is one character, a lone half is junk
    expect(textProblem(`${'文'.repeat(98)}\uD83D\uDE00\uDC00`)).toMatch(/^1 of its 100 characters \(1%\)/)
    // tab, newlines, form feed (a PDF's page break) are text
    expect(textProblem('页一\f页二\t\r\n\v'.repeat(3))).toBeUndefined()
    expect(textProblem(' \n ')).toBe('is blank')
  })

  it('refuses GBK bytes read as UTF-8 (mojibake), naming the share', async () => {
    const mojibake = (await readFile(join(FILES, 'notes-gbk.txt'))).toString('utf8')
    const replaced = [...mojibake].filter((c) => c === '\uFFFD').length
    expect(replaced).toBeGreaterThan(10)
    expect(textProblem(mojibake)).toMatch(new RegExp(`^${replaced} of its ${[...mojibake].length} characters`))
  })
})
