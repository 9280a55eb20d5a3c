/**
 * The catalog's checkpoint file (src/corpus/documents/catalog-checkpoint.ts) on the real service, in child processes on
 * real files (issue 44): a start-up that had to scroll writes the file in the background, so a process killed after it
 * (no clean stop at all) is followed by a start-up that reads it; and a stop cut short at any moment (SIGTERM, then
 * SIGKILL a few milliseconds later) leaves the file readable or absent, never damaged, and never one that the next
 * start-up takes for the vector store's state when it is not: every document ingested is there afterwards, each with the
 * chunks the chunker makes of it (the independent count).
 */
import { readdir, rm } from 'node:fs/promises'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readCheckpoint } from '../../src/corpus/documents/catalog-checkpoint.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

const documents: DocumentInput[] = Array.from({ length: 96 }, (_, i) => ({
  id: `ckpt-${i}`,
  text: `# 文档 ${i}\n\n编号 tag${i} 的第一段，讨论差旅报销。\n\n## 第二节\n\n编号 tag${i} 的第二段，讨论咳嗽随访。\n\n## 第三节\n\n编号 tag${i} 的第三段。`
}))
const chunksOf = new Map(documents.map((d) => [d.id, chunkDocument(d).length]))

let dataDir = ''
let server: ServerProcess | undefined
afterAll(async () => {
  await server?.kill('SIGKILL')
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

const catalogFile = () => join(dataDir, 'catalog', 'recall_chunks.catalog')

async function start(): Promise<ServerProcess> {
  server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'false' })
  return server
}

async function ingest(s: ServerProcess, batch: DocumentInput[]): Promise<void> {
  const r = await fetch(`${s.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documents: batch }) })
  expect(r.status, await r.clone().text()).toBe(200)
}

/** Where the catalog came from at this start-up (the `documents` step's detail on /readyz). */
async function catalogSource(s: ServerProcess): Promise<string> {
  const body = await (await fetch(`${s.url}/readyz`)).json() as { startup: { steps: Array<{ name: string; detail: string }> } }
  return body.startup.steps.find((step) => step.name === 'documents')!.detail.replace(/^.*catalog: /, '')
}

/** Every document the service lists, with its chunks, against what was ingested (the chunker's own count). */
async function expectHeld(s: ServerProcess, ingested: DocumentInput[]): Promise<void> {
  const list = await (await fetch(`${s.url}/documents?limit=1000`)).json() as { documents: Array<{ id: string; chunks: number }>; total: number }
  expect(list.total).toBe(ingested.length)
  expect(Object.fromEntries(list.documents.map((d) => [d.id, d.chunks]))).toEqual(Object.fromEntries(ingested.map((d) => [d.id, chunksOf.get(d.id)])))
  // the lexical leg agrees with the catalog (its sync is skipped when the file's digest says it holds the same)
  const last = ingested[ingested.length - 1]!
  const hits = await (await fetch(`${s.url}/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${last.id.replace('ckpt-', 'tag')}`)).json() as { recall_bundle: Array<{ id: string }> }
  expect(hits.recall_bundle.filter((h) => h.id.startsWith(`${last.id}#`))).toHaveLength(chunksOf.get(last.id)!)
}

async function waitForFile(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await readdir(join(dataDir, 'catalog')).catch(() => [] as string[])).includes('recall_chunks.catalog')) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('no catalog file was written in the background within 60 s')
}

describe('the catalog checkpoint written in the background, and a stop cut short', () => {
  it('a start-up that scrolled writes the file in the background; after a SIGKILL the next start-up reads it', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'recall-catalog-bg-'))
    const first = await start()
    for (let at = 0; at < 48; at += 16) await ingest(first, documents.slice(at, at + 16))
    await first.kill('SIGKILL')
    await rm(catalogFile(), { force: true })

    const second = await start()
    expect(await catalogSource(second)).toMatch(/^scroll/)
    await waitForFile()
    await second.kill('SIGKILL')

    const third = await start()
    expect(await catalogSource(third)).toBe('checkpoint')
    await expectHeld(third, documents.slice(0, 48))
    await third.kill('SIGKILL')
  }, 600_000)

  it('a stop cut short at any moment leaves the file readable or absent, and the next start-up holds every document', async () => {
    let ingested = documents.slice(0, 48)
    for (const [round, killAfterMs] of [5, 40, 120, 400].entries()) {
      const s = await start()
      const batch = documents.slice(48 + round * 12, 60 + round * 12)
      await ingest(s, batch)
      ingested = [...ingested, ...batch]
      const exited = new Promise((r) => s.child.once('exit', r))
      s.child.kill('SIGTERM')
      await new Promise((r) => setTimeout(r, killAfterMs))
      s.child.kill('SIGKILL')
      await exited
      // readable (its checksum holds: any reason but damage) or absent
      const read = await readCheckpoint(catalogFile(), { stamp: 'not-a-stamp', collection: 'recall_chunks', namespace: 'default' })
      expect('unused' in read ? read.unused : 'read', `killed ${killAfterMs} ms after SIGTERM`).toMatch(/^(stale|none kept)/)
      const next = await start()
      expect(await catalogSource(next), `killed ${killAfterMs} ms after SIGTERM`).toMatch(/^(checkpoint|scroll \(checkpoint: (stale|none kept))/)
      await expectHeld(next, ingested)
      await next.kill('SIGKILL')
    }
  }, 900_000)
})
