import { randomBytes } from 'node:crypto'
import { QdrantClient } from '@qdrant/js-client-rest'
import { describe, inject } from 'vitest'
import { QdrantSoleWriterRegistry } from '../../src/corpus/sole-writer/index.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { describeSoleWriterRegistryContract } from '../contracts/sole-writer-registry.contract.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`sole-writer.qdrant: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('on a real Qdrant', () => {
  describeSoleWriterRegistryContract('qdrant', async () => {
    const collection = `sw_${randomBytes(6).toString('hex')}_writers`
    return {
      open: () => new QdrantSoleWriterRegistry({ url, collection, timeoutMs: 10_000, settleMs: 200 }),
      async drop() {
        await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined)
      }
    }
  })
})
