/**
 * What the write window costs in Redis memory (docs/scale-out-state.md, "The write window"): CMRC 2018 trial paragraphs
 * chunked by the real chunker, each kept as one document's state exactly as the write path keeps it (mark, then the
 * record with its state), in a real redis-server; then `MEMORY USAGE` of the window's hash and sorted set against the
 * chunks and the chunk text they hold. Writes bench/results/write-window-memory.json.
 *
 *   nice -n 10 npx tsx bench/write-window-memory.ts [--documents 1000]
 */
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { keepStates, windowDraft } from '../src/corpus/write-window.js'
import { createRedisClient } from '../src/providers/cache/redis.js'
import { RedisGenerationStore } from '../src/providers/generations/redis.js'
import { startRedis } from '../test/helpers/redis-server.js'
import { loadCmrc } from './lib/cmrc.js'

const { values } = parseArgs({ options: { documents: { type: 'string', default: '1000' } } })
const DOCUMENTS = Number(values.documents)
const versions = { chunker: 'bench', analyzer: 'cjk-bigram@bench', model: 'bge-small-zh-v1.5-q' }

const redis = await startRedis()
const client = createRedisClient(redis.url, { commandTimeoutMs: 5000 })
try {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  const { documents } = await loadCmrc()
  const chosen = documents.slice(0, DOCUMENTS)
  const store = new RedisGenerationStore({ client, window: { documents: DOCUMENTS, documentBytes: 1 << 24, ttlMs: 3_600_000 } })
  const namespace = 'memory'
  let chunks = 0
  let textBytes = 0
  let stateBytes = 0
  for (const d of chosen) {
    const written = chunkDocument(d).map((c) => ({ ...c, versions }))
    const draft = windowDraft()
    keepStates(draft, [d.id], written)
    await store.markWriting(namespace, [d.id], draft.token)
    await store.recordWrite(namespace, ['hybrid'], { docIds: [d.id], window: { token: draft.token, states: draft.states } })
    chunks += written.length
    textBytes += written.reduce((n, c) => n + Buffer.byteLength(c.text), 0)
    stateBytes += Buffer.byteLength(draft.states.get(d.id)!)
  }
  const key = `recall:generations:${namespace}:window`
  const memory = async (k: string) => Number(await client.call('MEMORY', 'USAGE', k, 'SAMPLES', '0'))
  const hash = await memory(key)
  const order = await memory(`${key}-order`)
  const kept = await client.hlen(key)
  const result = {
    documents: chosen.length, kept, chunks,
    chunk_text_bytes_mean: Math.round(textBytes / chunks),
    state_bytes_per_chunk: Math.round(stateBytes / chunks),
    redis_bytes: { window_hash: hash, window_order: order },
    redis_bytes_per_chunk: Math.round((hash + order) / chunks),
    redis_bytes_per_document: Math.round((hash + order) / kept),
    redis_version: (await client.info('server')).match(/redis_version:(\S+)/)?.[1],
    at: new Date().toISOString()
  }
  await writeFile(new URL('./results/write-window-memory.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
  console.log(JSON.stringify(result, null, 2))
} finally {
  client.disconnect()
  await redis.stop()
}
