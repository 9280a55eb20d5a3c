import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'

// The service's release of the heap (src/memory/heap-release.ts) is timed by the write path: once after writes that
// add have gone quiet, not after a delete alone, and it logs what it gave back.
const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('MEMORY_RELEASE_AFTER_MS in the service', () => {
  it('releases once after an ingest goes quiet, logs it, and not after a delete alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-heap-release-'))
    dirs.push(dir)
    const released: Array<Record<string, number>> = []
    const logger = {
      info: (obj: object, msg: string) => { if (msg.startsWith('heap released')) released.push(obj as Record<string, number>) },
      warn: () => {}
    }
    const config = loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', EMBEDDING_SESSIONS: '0', MEMORY_RELEASE_AFTER_MS: '300' })
    const services = await openServices(config, { logger })
    try {
      const write = (id: string) => services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: [{ id, text: `# 标题 ${id}\n\n夜间告警由二线值班处理，记录编号 ${id}。` }] })
      await write('a')
      await write('b')
      await wait(2000)
      expect(released).toHaveLength(1)
      expect(released[0]).toMatchObject({ ms: expect.any(Number), rss_before_bytes: expect.any(Number), rss_after_bytes: expect.any(Number) })
      await services.writePath.write('default', { kind: 'documents', op: 'delete', ids: ['a'] })
      await wait(1500)
      expect(released).toHaveLength(1)
    } finally {
      await services.close()
    }
  }, 120_000)
})
