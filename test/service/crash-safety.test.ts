import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { startServer } from '../../scripts/lib/server-process.js'

// Each document has a token of its own (`tagN`) so the lexical leg can be asked for exactly it.
const documents: DocumentInput[] = Array.from({ length: 240 }, (_, i) => ({
  id: `crash-${i}`,
  text: `# 文档 ${i}\n\n编号 tag${i} 的第一段内容，讨论差旅报销。\n\n## 第二节\n\n编号 tag${i} 的第二段，讨论咳嗽随访。\n\n## 第三节\n\n编号 tag${i} 的第三段。`
}))
const expectedChunks = new Map(documents.map((d) => [d.id, chunkDocument(d).length]))

let dataDir = ''
afterAll(async () => { if (dataDir) await rm(dataDir, { recursive: true, force: true }) })

describe('crash safety on the embedded stores', () => {
  it('after SIGKILL in the middle of a large ingest, every document is wholly present or wholly absent, in both legs', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'recall-crash-'))
    const env = { DATA_DIR: dataDir, DEMO_DATA: 'false' }
    const first = await startServer(env)
    // Several writers at once, 12 documents a request, until the kill stops them.
    let sent = 0
    const writers = Array.from({ length: 3 }, async () => {
      while (sent < documents.length) {
        const batch = documents.slice(sent, sent + 12)
        sent += 12
        await fetch(`${first.url}/ingest/documents`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documents: batch })
        }).catch(() => undefined)
      }
    })
    // Kill once some documents are in, while others are still being embedded and written.
    for (let i = 0; i < 600; i++) {
      const r = await fetch(`${first.url}/documents`).then((x) => x.json() as Promise<{ total: number }>).catch(() => ({ total: 0 }))
      if (r.total >= 36) break
      await new Promise((res) => setTimeout(res, 50))
    }
    await first.kill('SIGKILL')
    await Promise.all(writers)

    const second = await startServer(env)
    try {
      const list = await (await fetch(`${second.url}/documents`)).json() as { documents: { id: string; chunks: number }[]; total: number }
      expect(list.total).toBeGreaterThan(0)
      expect(list.total).toBeLessThan(documents.length)
      for (const d of list.documents) expect(d.chunks, d.id).toBe(expectedChunks.get(d.id))
      const present = new Set(list.documents.map((d) => d.id))
      // Both legs agree with the catalog: the lexical leg finds every chunk of a present document and
      // nothing of an absent one; the vector leg returns only chunks of present documents.
      for (const d of documents.filter((_, i) => i % 8 === 0)) {
        const tag = d.id.replace('crash-', 'tag')
        const r = await fetch(`${second.url}/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${tag}`)
        const ids = (await r.json() as { recall_bundle: { id: string }[] }).recall_bundle.map((x) => x.id).filter((id) => id.startsWith(`${d.id}#`))
        expect(ids.length, d.id).toBe(present.has(d.id) ? expectedChunks.get(d.id) : 0)
      }
      const vector = await (await fetch(`${second.url}/retrieve?mode=hybrid&legs=vector&top_k=100&q=${encodeURIComponent('讨论差旅报销')}`)).json() as { recall_bundle: { metadata: { doc_id: string } }[] }
      expect(vector.recall_bundle.length).toBeGreaterThan(0)
      for (const item of vector.recall_bundle) expect(present.has(item.metadata.doc_id)).toBe(true)
    } finally {
      await second.kill()
    }
  }, 300_000)
})
