import { describe, expect, it } from 'vitest'
import { chunkId, chunkIndexOf, decodeChunk, documentOfChunk, encodeChunk, type ChunkRecord } from '../../src/kernel/chunk-payload.js'

const full: ChunkRecord = {
  id: 'cough-guide#3', doc_id: 'cough-guide', chunk_index: 3, text: '复查血常规', source: 'guides/cough.md',
  title: '成人咳嗽诊疗指引', metadata: { dept: 'respiratory', year: 2024, reviewed: true, tags: ['cough', 'adult'] }
}
const bare: ChunkRecord = { id: 'notes#0', doc_id: 'notes', chunk_index: 0, text: '发热先测体温', source: 'notes' }

describe('the chunk payload codec', () => {
  it.each([['with title and metadata', full], ['without them', bare]])('gives back the chunk it encoded, %s', (_, chunk) => {
    expect(decodeChunk(chunk.id, encodeChunk(chunk))).toEqual(chunk)
  })

  it('writes the chunk\'s fields and nothing else: the id is the record\'s, not the payload\'s', () => {
    expect(encodeChunk(bare)).toEqual({ doc_id: 'notes', text: '发热先测体温', chunk_index: 0, source: 'notes' })
  })

  it('reads a missing chunk_index from the id, <doc_id>#<index>', () => {
    expect(decodeChunk('cough-guide#3', { doc_id: 'cough-guide', text: '复查血常规', source: 'guides/cough.md' }).chunk_index).toBe(3)
    expect(decodeChunk('v2#12', { doc_id: 'v2', text: 't' }).chunk_index).toBe(12)
  })

  it.each([[-1], [1.5], ['3'], [null]])('reads the index from the id when the payload\'s chunk_index is %j', (value) => {
    expect(decodeChunk('a#7', { doc_id: 'a', text: 't', chunk_index: value }).chunk_index).toBe(7)
  })

  it('prefers the payload\'s chunk_index to the id\'s', () => {
    expect(decodeChunk('a#7', { doc_id: 'a', text: 't', chunk_index: 2 }).chunk_index).toBe(2)
  })

  it('keeps the chunk\'s fields of a stored payload and leaves the store\'s and the lexical leg\'s out', () => {
    const stored = {
      ...encodeChunk(full), id: 'cough-guide#3', namespace: 'clinic', lex_terms: [17, 42], lex_len: 4, lex_aref: 6.5, n: 1
    }
    expect(decodeChunk('cough-guide#3', stored)).toEqual(full)
  })

  it('falls back to the doc id for a missing source, and drops a title or metadata of the wrong kind', () => {
    expect(decodeChunk('a#0', { doc_id: 'a', text: 't', title: 5, metadata: ['x'] })).toEqual({ id: 'a#0', doc_id: 'a', chunk_index: 0, text: 't', source: 'a' })
    expect(decodeChunk('a#0', { doc_id: 'a', text: 't', metadata: 'x' })).not.toHaveProperty('metadata')
  })

  it.each([['a'], ['a#'], ['a#x'], ['a#1b']])('refuses a point with no chunk_index whose id %j names no index', (id) => {
    expect(() => decodeChunk(id, { doc_id: 'a', text: 't' })).toThrow(RangeError)
  })

  it('makes and takes apart chunk ids', () => {
    expect(chunkId('cough-guide', 3)).toBe('cough-guide#3')
    expect(chunkIndexOf('cough-guide#3')).toBe(3)
    expect(chunkIndexOf('cough-guide')).toBeUndefined()
    expect(documentOfChunk('cough-guide#3')).toBe('cough-guide')
  })
})
