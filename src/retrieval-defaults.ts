/**
 * Per-namespace retrieval defaults (what `npm run tune -- --apply` stores): hybrid options used whenever a
 * request does not set them, its legs among them (`tune` keeps the graph leg where it measured it better). In Redis when `REDIS_URL` is set, so that every replica uses the same; else
 * in `DATA_DIR/retrieval-defaults.json`. A Redis that does not answer leaves a replica on the last defaults
 * it read for the namespace (none at first), never failing the retrieval.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { RedisClient } from './providers/redis-client.js'
import { BackendUnavailableError } from './providers/errors.js'
import { impliedFusion } from '../adapters/hybrid/fusion.js'
import type { Fusion } from '../adapters/hybrid/fusion.js'
import type { StructuresRead } from '../adapters/types.js'

/** The hybrid options a namespace may set defaults for. */
interface HybridDefaultsSet {
  fusion?: 'rrf' | 'convex'
  alpha?: number
  normalisation?: 'tmm' | 'minmax' | 'zscore'
  rrf_k?: number
  window?: number
  weights?: { vector?: number; lexical?: number; graph?: number }
  /** The legs a request that names none runs (absent: vector and lexical). */
  legs?: ('vector' | 'lexical' | 'graph')[]
  /** convex: the graph leg's weight. */
  graph_weight?: number
}

export interface RetrievalDefaults {
  hybrid?: HybridDefaultsSet
  /**
   * What graphrag and episodic read in the namespace: `imported`, `derived` (from its documents) or `both`; absent,
   * the derived part only where nothing was imported (docs/derivation.md, "What each mode reads").
   */
  structures?: StructuresRead
  /** When and by what they were set (free text, e.g. the tune run's held-out figures). */
  note?: string
  updated_at?: string
}

export interface RetrievalDefaultsStore {
  get(namespace: string): Promise<RetrievalDefaults | undefined>
  set(namespace: string, defaults: RetrievalDefaults): Promise<void>
  /** True when there was something to delete. */
  delete(namespace: string): Promise<boolean>
}

const HYBRID_KEYS = ['fusion', 'alpha', 'normalisation', 'rrf_k', 'window', 'weights', 'legs', 'graph_weight'] as const
const CONVEX_ONLY = new Set(['alpha', 'normalisation', 'graph_weight'])
/** Stored options that belong to no fusion, so a request naming the other fusion still gets them. */
const EITHER_FUSION = new Set(['window', 'legs'])
const RRF_ONLY = new Set(['rrf_k', 'weights'])

/**
 * The request with the namespace's hybrid defaults filled in where it sets nothing. A request that names
 * another fusion than the stored one gets none of the stored fusion's own options (`fusion: "rrf"` stays
 * exactly the service's RRF unless it sets them), only a stored `window` and `legs`. A request's own `legs` wins whole.
 */
export function withRetrievalDefaults<R extends { mode: string; fusion?: Fusion; rrf_k?: number; weights?: unknown; alpha?: number; normalisation?: string; graph_weight?: number; legs?: readonly string[] }>(r: R, defaults: RetrievalDefaults | undefined): R {
  const d = defaults?.hybrid
  if (r.mode !== 'hybrid' || !d) return r
  const storedFusion = d.fusion ?? 'rrf'
  const asked = impliedFusion(r)
  const otherFusion = asked !== undefined && asked !== storedFusion
  const out: Record<string, unknown> = { ...r }
  for (const key of HYBRID_KEYS) {
    if (out[key] !== undefined || d[key] === undefined) continue
    if (otherFusion && !EITHER_FUSION.has(key)) continue
    if (!otherFusion && (storedFusion === 'rrf' ? CONVEX_ONLY : RRF_ONLY).has(key)) continue
    out[key] = d[key]
  }
  return out as R
}

/** The modes the `structures` setting concerns. */
export const READS_STRUCTURES: ReadonlySet<string> = new Set(['graphrag', 'episodic'])

/** Whether a request reads the graph or the Episodes, and so what `structures` says: graphrag, episodic, and hybrid with its `graph` leg. */
export function readsStructures(r: { mode: string; legs?: readonly string[] }): boolean {
  return READS_STRUCTURES.has(r.mode) || (r.mode === 'hybrid' && r.legs?.includes('graph') === true)
}

/** The namespace's `structures` setting, for a request it concerns (`readsStructures`). */
export function structuresOf(r: { mode: string; legs?: readonly string[] }, defaults: RetrievalDefaults | undefined): StructuresRead | undefined {
  return readsStructures(r) ? defaults?.structures : undefined
}

/** Waits up to `ms` for the client to be connected (its commands fail at once while it is not). */
async function connected(redis: RedisClient, ms: number): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve) => {
    const done = () => { clearTimeout(timer); redis.off('ready', done); resolve() }
    const timer = setTimeout(done, ms)
    timer.unref()
    redis.once('ready', done)
  })
}

class RedisRetrievalDefaults implements RetrievalDefaultsStore {
  private readonly lastRead = new Map<string, RetrievalDefaults | undefined>()
  constructor(private readonly redis: RedisClient, private readonly prefix = 'recall:retrieval-defaults:') {}

  async get(namespace: string): Promise<RetrievalDefaults | undefined> {
    try {
      await connected(this.redis, 200)
      const raw = await this.redis.get(this.prefix + namespace)
      const value = raw === null ? undefined : JSON.parse(raw) as RetrievalDefaults
      this.lastRead.set(namespace, value)
      return value
    } catch {
      return this.lastRead.get(namespace)
    }
  }

  async set(namespace: string, defaults: RetrievalDefaults): Promise<void> {
    try {
      await connected(this.redis, 2000)
      await this.redis.set(this.prefix + namespace, JSON.stringify(defaults))
    } catch (error) {
      throw new BackendUnavailableError('cache:redis', `could not store the retrieval defaults: ${(error as Error).message}`)
    }
    this.lastRead.set(namespace, defaults)
  }

  async delete(namespace: string): Promise<boolean> {
    try {
      await connected(this.redis, 2000)
      const n = await this.redis.del(this.prefix + namespace)
      this.lastRead.delete(namespace)
      return n > 0
    } catch (error) {
      throw new BackendUnavailableError('cache:redis', `could not delete the retrieval defaults: ${(error as Error).message}`)
    }
  }
}

/** One JSON file of every namespace's defaults, rewritten whole (temporary file, then rename) on a change. */
class FileRetrievalDefaults implements RetrievalDefaultsStore {
  private all: Record<string, RetrievalDefaults> | undefined
  private writing: Promise<void> = Promise.resolve()
  constructor(private readonly file: string) {}

  private async load(): Promise<Record<string, RetrievalDefaults>> {
    if (!this.all) {
      try {
        this.all = JSON.parse(await readFile(this.file, 'utf8')) as Record<string, RetrievalDefaults>
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        this.all = {}
      }
    }
    return this.all
  }

  async get(namespace: string): Promise<RetrievalDefaults | undefined> {
    return (await this.load())[namespace]
  }

  async set(namespace: string, defaults: RetrievalDefaults): Promise<void> {
    const all = await this.load()
    all[namespace] = defaults
    await this.save(all)
  }

  async delete(namespace: string): Promise<boolean> {
    const all = await this.load()
    if (!(namespace in all)) return false
    delete all[namespace]
    await this.save(all)
    return true
  }

  private save(all: Record<string, RetrievalDefaults>): Promise<void> {
    const text = `${JSON.stringify(all, null, 2)}\n`
    this.writing = this.writing.then(async () => {
      await mkdir(dirname(this.file), { recursive: true })
      await writeFile(`${this.file}.tmp`, text)
      await rename(`${this.file}.tmp`, this.file)
    })
    return this.writing
  }
}

/** Redis when the service has one (`REDIS_URL`), else the file under `dataDir`. */
export function createRetrievalDefaultsStore(redis: RedisClient | undefined, dataDir: string): RetrievalDefaultsStore {
  return redis ? new RedisRetrievalDefaults(redis) : new FileRetrievalDefaults(join(dataDir, 'retrieval-defaults.json'))
}
