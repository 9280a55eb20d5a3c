import { parseArgs } from 'node:util'
import { loadConfig } from '../config.js'
import { isNamespace, NAMESPACE_PATTERN } from '../providers/namespace.js'
import { backfillLexicalLeg, type LexicalBackfillProgress } from '../providers/lexical-index/qdrant-backfill.js'
import { lexicalLegOnQdrant } from '../providers/lexical-index/qdrant-wiring.js'
import { createVectorStore } from '../providers/vector-store/index.js'
import { generationsFor, redisFor, writeConnectionFor, writeLockFor } from '../shared-writes.js'

const USAGE = `usage: npm run backfill -- [--namespace NS] [--batch N]

Upgrades the chunk collection of an existing deployment (VECTOR_BACKEND=qdrant, written by a version without the
lexical leg in Qdrant) in place: points without a namespace go to "default", the lexical sparse vector and its
payload are written for every point that lacks them, with a progress line (points done / total, rate). Idempotent
and resumable (only points still lacking the leg are read), and safe while the service answers and writes: each
namespace is written under its documents write lock (shared in Redis with REPLICAS>1 and REDIS_URL, as the
service's writes take it), and a namespace it changed is recorded as a hybrid write (a new generation).
  --namespace NS   only this namespace's points (${NAMESPACE_PATTERN}); default every namespace
  --batch N        points per request (default 256)`

/** One progress line: points done / total, the rate, and what is left. */
export function progressLine(p: LexicalBackfillProgress, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? p.done / (elapsedMs / 1000) : 0
  const left = rate > 0 ? Math.ceil((p.total - p.done - p.skipped) / rate) : undefined
  return `backfill: ${p.done}/${p.total} points (${Math.round(rate)} points/s${left !== undefined && p.done < p.total ? `, ~${left} s left` : ''})` +
    `${p.skipped > 0 ? `, ${p.skipped} without text skipped` : ''}`
}

/** Tests: called in each namespace once its lock is held, before anything is written. */
export interface BackfillHooks {
  onLocked?: (namespace: string) => Promise<void>
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, out: NodeJS.WritableStream = process.stderr, hooks: BackfillHooks = {}): Promise<LexicalBackfillProgress> {
  const { values } = parseArgs({ args: argv, options: { namespace: { type: 'string' }, batch: { type: 'string' }, help: { type: 'boolean' } } })
  if (values.help) {
    out.write(`${USAGE}\n`)
    return { done: 0, total: 0, skipped: 0 }
  }
  if (values.namespace !== undefined && !isNamespace(values.namespace)) throw new Error(`--namespace "${values.namespace}" does not match ${NAMESPACE_PATTERN}`)
  const batch = values.batch === undefined ? 256 : Number(values.batch)
  if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) throw new Error(`--batch "${values.batch}" is not a whole number from 1 to 10000`)
  const config = loadConfig(env)
  if (config.vector.backend !== 'qdrant') throw new Error(`backfill needs VECTOR_BACKEND=qdrant (it is "${config.vector.backend}")`)
  const collection = `${config.collectionPrefix}chunks`
  const consistency = config.vector.cluster.readConsistency
  const { lexical } = lexicalLegOnQdrant(config, collection)
  const { exists } = await lexical.call(() => lexical.client.collectionExists(collection))
  if (!exists) throw new Error(`collection ${collection} does not exist at ${config.vector.url}: nothing to backfill`)
  // the collection's own dimension: the check against the model's is the service's, at its start-up
  const info = await lexical.call(() => lexical.client.getCollection(collection))
  const dense = info.config.params.vectors as { size?: number } | Record<string, { size: number }> | undefined
  const dimensions = typeof dense?.size === 'number' ? dense.size : Object.values(dense ?? {})[0]?.size
  if (typeof dimensions !== 'number') throw new Error(`collection ${collection} has no dense vector to keep`)
  const vectors = createVectorStore({
    backend: 'qdrant', url: config.vector.url, timeoutMs: config.timeouts.vector, writeTimeoutMs: config.timeouts.vectorWrite, cluster: config.vector.cluster,
    ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {})
  })
  // the service's lock and generations: a write of the service to a namespace being backfilled waits for it
  const redis = redisFor(config)
  const writeRedis = writeConnectionFor(config, redis)
  const generations = generationsFor(config, redis, writeRedis, undefined)
  const lock = writeLockFor(config, redis, writeRedis)
  try {
    await vectors.ensureCollection(collection, dimensions) // payload indexes (points without a namespace join default at the service's start-up)
    await lexical.open() // the sparse vector, the settings (a mismatch stops here), the lexical payload indexes
    const namespaces = values.namespace ? [values.namespace] : await vectors.namespaces(collection)
    const started = performance.now()
    const sum: LexicalBackfillProgress = { done: 0, total: 0, skipped: 0 }
    let lastLine = 0
    for (const namespace of namespaces) {
      const before = { ...sum }
      const result = await lock.exclusive(`documents:${namespace}`, async (lease) => {
        await hooks.onLocked?.(namespace)
        lease.assertHeld()
        return backfillLexicalLeg(lexical.writer, collection, {
          namespace, batchSize: batch, consistency, call: (request) => lexical.call(request), analyzer: config.lexical.analyzer,
          onProgress: (p) => {
            const now = performance.now()
            const at = { done: before.done + p.done, total: before.total + p.total, skipped: before.skipped + p.skipped }
            if (now - lastLine >= 1000 || p.done + p.skipped >= p.total) {
              lastLine = now
              out.write(`${progressLine(at, now - started)}\n`)
            }
          }
        })
      })
      sum.done += result.done
      sum.total += result.total
      sum.skipped += result.skipped
      // the hybrid version moves on: cached answers and the lexical statistics read before end on every replica
      if (result.done > 0) await generations.recordWrite(namespace, ['hybrid'])
    }
    out.write(`backfill: done, ${sum.done} points given the lexical leg in ${Math.round(performance.now() - started)} ms\n`)
    return sum
  } finally {
    await vectors.close()
    await lexical.close()
    await generations.close()
    for (const client of new Set([redis, writeRedis])) if (client) await client.quit().catch(() => client.disconnect())
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error: Error) => {
    process.stderr.write(`${error.message}\n${USAGE}\n`)
    process.exit(1)
  })
}
