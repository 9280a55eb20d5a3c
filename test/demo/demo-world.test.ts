import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { readDocuments } from '../../src/corpus/files.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'

describe('the demo world', () => {
  it('passes its own checker (formats, sizes, every reference resolves)', () => {
    const out = execFileSync('node_modules/.bin/tsx', ['demo/check.ts'], { encoding: 'utf8' })
    expect(out).toMatch(/\nok\s*$/)
  })

  it('has at least 30 documents, chunked by the service into the chunk ids the graph cites', async () => {
    const docs = await readDocuments(['demo/documents'])
    expect(docs.length).toBeGreaterThanOrEqual(30)
    const chunkIds = new Set(docs.flatMap(chunkDocument).map((c) => c.id))
    const graph = (await import('../../demo/graph.json', { with: { type: 'json' } })).default as {
      entities: { id: string; source_chunk_ids?: string[] }[]
    }
    const cited = graph.entities.flatMap((e) => e.source_chunk_ids ?? [])
    expect(cited.length).toBeGreaterThan(150)
    expect(cited.filter((id) => !chunkIds.has(id))).toEqual([])
  })
})
