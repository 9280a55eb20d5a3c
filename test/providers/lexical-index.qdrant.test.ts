import { basename, join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, inject } from 'vitest'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import { describeEnglishStemmingContract, describeLexicalIndexContract, describeLexicalIndexesContract } from '../contracts/lexical-index.contract.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant: ${QDRANT_SKIP_LINE}`)

// each fresh folder of the contract becomes a collection of its own
const collectionOf = (dir: string) => `lexc_${basename(dir).replace(/[^A-Za-z0-9_-]/g, '_')}`
const made = new Set<string>()
const open = (dir: string) => {
  made.add(collectionOf(dir))
  return new QdrantLexicalIndexes({ url, timeoutMs: 10_000, collection: collectionOf(dir), points: 'own', batchSize: 100 })
}

// the same, each index with its local copy (one process writes: the copy is searched whenever it is ready)
const openWithCopy = (dir: string) => {
  made.add(collectionOf(dir))
  return new QdrantLexicalIndexes({
    url, timeoutMs: 10_000, collection: collectionOf(dir), points: 'own', batchSize: 100,
    localCopy: { dir: join(dir, 'copy'), complete: 'sole-writer' }
  })
}

afterAll(async () => {
  if (!url) return
  const client = new QdrantClient({ url, checkCompatibility: false })
  for (const c of made) await client.deleteCollection(c).catch(() => undefined)
})

/** The namespaces the collection of a contract folder holds points of. */
const storedNamespaces = async (dir: string) => {
  const client = new QdrantClient({ url, checkCompatibility: false })
  if (!(await client.collectionExists(collectionOf(dir))).exists) return []
  const { hits } = await client.facet(collectionOf(dir), { key: 'namespace', exact: true, limit: 1000 })
  return hits.filter((h) => h.count > 0).map((h) => `namespace ${String(h.value)}`).sort()
}

describe.skipIf(!url)('QdrantLexicalIndexes against a real Qdrant', () => {
  describeLexicalIndexContract('qdrant', (dir) => open(dir).get('default'))
  describeLexicalIndexesContract('qdrant', open, storedNamespaces)
})

describe.skipIf(!url)('QdrantLexicalIndexes with the English analyzer, against a real Qdrant', () => {
  const english = (dir: string) => {
    made.add(collectionOf(dir))
    return new QdrantLexicalIndexes({ url, timeoutMs: 10_000, collection: collectionOf(dir), points: 'own', batchSize: 100, analyzer: 'cjk-bigram-english' })
  }
  describeLexicalIndexContract('qdrant, cjk-bigram-english', (dir) => english(dir).get('default'))
  describeEnglishStemmingContract('qdrant', (dir) => english(dir).get('default'))
})

describe.skipIf(!url)('QdrantLexicalIndexes with a local copy, against a real Qdrant', () => {
  describeLexicalIndexContract('qdrant + local copy', (dir) => openWithCopy(dir).get('default'))
  describeLexicalIndexesContract('qdrant + local copy', openWithCopy, storedNamespaces)
})
