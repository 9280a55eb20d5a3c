import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer } from '../../scripts/lib/server-process.js'

// The lexical worker thread starts from TypeScript sources under tsx and vitest (every other test) and from
// compiled JavaScript under plain node: this builds the service as `npm run build` does and runs that.
const outDir = join('.cache', 'dist-test')
let dataDir = ''
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
  await rm(outDir, { recursive: true, force: true })
})

describe('the built service', () => {
  it('runs its lexical worker from dist/ and finds a document right after its ingest', async () => {
    await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', outDir])
    dataDir = await mkdtemp(join(tmpdir(), 'recall-built-'))
    const server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'false' }, { args: [join(outDir, 'src', 'http', 'server.js')] })
    try {
      const ingest = await fetch(`${server.url}/ingest/documents`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ documents: [{ id: 'built', text: '# 构建\n\n编号 tagbuilt 的段落。' }] })
      })
      expect(ingest.status).toBe(200)
      const r = await fetch(`${server.url}/retrieve?mode=hybrid&legs=lexical&q=tagbuilt`)
      expect((await r.json() as { recall_bundle: { id: string }[] }).recall_bundle.map((i) => i.id)).toEqual(['built#0'])
      const ready = await (await fetch(`${server.url}/readyz`)).json() as { backends: { backend: string; ok: boolean }[] }
      expect(ready.backends.find((b) => b.backend === 'lexical-index:bm25')?.ok).toBe(true)
    } finally {
      await server.kill()
    }
  }, 240_000)
})
