/**
 * docs/deployment.md: a chunk collection spread otherwise than the service is configured to spread it (here: one
 * copy of each shard, where QDRANT_REPLICATION_FACTOR asks for two) makes the service refuse to start, naming the
 * collection's value, the configured one and the variable.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { startServer } from '../../scripts/lib/server-process.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`qdrant-cluster-settings-mismatch: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('a chunk collection created with another replication factor', () => {
  const prefix = `clmismatch_${process.pid}_`
  const dirs: string[] = []
  afterAll(async () => {
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(`${prefix}chunks`).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('makes the service refuse to start, naming the collection\'s factor, the configured one and its variable', async () => {
    // created as Qdrant creates a collection when told nothing: one copy of each shard
    await new QdrantClient({ url, checkCompatibility: false }).createCollection(`${prefix}chunks`, { vectors: { size: 512, distance: 'Cosine' } })
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-cluster-mismatch-'))
    dirs.push(dataDir)
    const started = startServer(
      { DATA_DIR: dataDir, DEMO_DATA: 'false', VECTOR_BACKEND: 'qdrant', QDRANT_URL: url, COLLECTION_PREFIX: prefix, QDRANT_REPLICATION_FACTOR: '2' },
      { until: 'readyz', timeoutMs: 120_000 }
    )
    const error = await started.then(async (s) => { await s.kill(); return undefined }, (e: unknown) => e as Error)
    expect(error?.message).toMatch(/server exited with 1/)
    expect(error?.message).toContain('refusing to start')
    expect(error?.message).toContain(`collection ${prefix}chunks was created with replication_factor 1`)
    expect(error?.message).toContain('replication_factor 2 (QDRANT_REPLICATION_FACTOR)')
  }, 180_000)
})
