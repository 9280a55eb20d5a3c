/**
 * docs/scale-out.md, "Configuration in the collection": a collection whose lexical leg was written with other analyzer or BM25 settings (its metadata) must
 * not be mixed with this service's tokenisation: the service refuses to start and names both.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { LEXICAL_SETTINGS } from '../../src/providers/lexical-index/lexical-point.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { startServer } from '../../scripts/lib/server-process.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-settings-mismatch: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('a chunk collection written with other lexical settings', () => {
  const prefix = `mismatch_${process.pid}_`
  const dirs: string[] = []
  afterAll(async () => {
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(`${prefix}chunks`).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('makes the service refuse to start, naming the stored settings and its own', async () => {
    const client = new QdrantClient({ url, checkCompatibility: false })
    const older = { ...LEXICAL_SETTINGS, analyzer: 'cjk-bigram@1', k1: 1.5 }
    await client.createCollection(`${prefix}chunks`, {
      vectors: { size: 512, distance: 'Cosine' }, metadata: { recall_lexical: older }
    })
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-mismatch-'))
    dirs.push(dataDir)
    const started = startServer(
      { DATA_DIR: dataDir, DEMO_DATA: 'false', VECTOR_BACKEND: 'qdrant', QDRANT_URL: url, COLLECTION_PREFIX: prefix },
      { until: 'readyz', timeoutMs: 120_000 }
    )
    const error = await started.then(async (s) => { await s.kill(); return undefined }, (e: unknown) => e as Error)
    expect(error?.message).toMatch(/server exited with 1/)
    expect(error?.message).toContain('refusing to start')
    // the stored settings as Qdrant gives them back (key order is the server's), and the service's own
    expect(error?.message).toContain('"analyzer":"cjk-bigram@1"')
    expect(error?.message).toContain('"k1":1.5')
    expect(error?.message).toContain(JSON.stringify(LEXICAL_SETTINGS))
  }, 180_000)
})
