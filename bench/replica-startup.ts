/**
 * Start-up of a replica over shared stores (docs/scale-out-state.md, "Start-up that does not grow with the corpus"): a namespace of N synthetic
 * chunks in Qdrant (both legs: dense vectors random, unit length, the lexical sparse vector from the real
 * analyzer), then a server started against it; ms from spawn to /readyz 200, and to the first answer of
 * `GET /documents` for that namespace (which waits for the namespace's catalog to load). With REPLICAS=2 the
 * catalog loads on first use; REPLICAS=1 reads every namespace before it is ready (the start-up every replica
 * had before the change). Needs QDRANT_URL and REDIS_URL.
 *
 *   QDRANT_URL=http://127.0.0.1:6333 REDIS_URL=redis://127.0.0.1:6379 nice -n 10 npx tsx bench/replica-startup.ts 10000,100000 [BEFORE_UP_TO]
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.js'
import { lexicalLegOnQdrant } from '../src/providers/lexical-index/qdrant-wiring.js'
import { createVectorStore } from '../src/providers/vector-store/index.js'
import { freePort } from '../scripts/lib/free-port.js'
import { msUntilAnswering } from './lib/answering.js'

const qdrantUrl = process.env.QDRANT_URL
const redisUrl = process.env.REDIS_URL
if (!qdrantUrl || !redisUrl) throw new Error('set QDRANT_URL and REDIS_URL')
const sizes = (process.argv[2] ?? '10000').split(',').map(Number)
/** REPLICAS=1 (the start-up before the change) is measured up to this size only: it grows with the corpus. */
const beforeUpTo = Number(process.argv[3] ?? Infinity)
const DIMENSIONS = 512 // the model's: the server refuses a collection of another dimension
const NAMESPACE = 'bench'

async function load(prefix: string, chunks: number): Promise<number> {
  const collection = `${prefix}chunks`
  const config = loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl!, COLLECTION_PREFIX: prefix, DATA_DIR: tmpdir() })
  const { sparse, lexical } = lexicalLegOnQdrant(config, collection)
  const vectors = createVectorStore({ backend: 'qdrant', url: qdrantUrl!, timeoutMs: 30_000, writeTimeoutMs: 300_000, sparse })
  const started = performance.now()
  await vectors.ensureCollection(collection, DIMENSIONS)
  const perDoc = 4
  for (let start = 0; start < chunks; start += 1000) {
    const upsert = Array.from({ length: Math.min(1000, chunks - start) }, (_, j) => {
      const i = start + j
      const v = new Float32Array(DIMENSIONS).map(() => Math.random() - 0.5)
      const norm = Math.hypot(...v)
      const doc = `doc-${Math.floor(i / perDoc)}`
      return {
        id: `${doc}#${i % perDoc}`, vector: v.map((x) => x / norm),
        payload: { doc_id: doc, text: `文档 ${doc} 的第 ${i % perDoc} 段，夜间告警由二线值班处理，编号 ${i}。`, chunk_index: i % perDoc, source: `bench/${doc}.md` }
      }
    })
    for (let attempt = 1; ; attempt++) {
      try {
        await vectors.write(collection, NAMESPACE, { upsert })
        break
      } catch (error) {
        if (attempt === 3) throw error // a connection the server closed under load: the same upsert again
      }
    }
  }
  // The lexical leg's payload indexes, built now and awaited (a facet over lex_len answers once they are), so that
  // no server start below pays for building them: that is a one-time cost of the upgrade, not of a start-up.
  await lexical.open()
  // green: the optimizer has indexed every segment (a search answers before that too, by a slower path)
  for (;;) {
    const info = await (await fetch(`${qdrantUrl}/collections/${collection}`)).json() as { result?: { status?: string } }
    if (info.result?.status === 'green') break
    await new Promise((r) => setTimeout(r, 500))
  }
  await vectors.close()
  return Math.round(performance.now() - started)
}

async function start(prefix: string, replicas: number): Promise<{ readyz_ms: number; first_list_ms: number; list_tries: number; documents: number; first_refusal?: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recall-replica-startup-'))
  const port = await freePort()
  const started = performance.now()
  const child = spawn('npx', ['tsx', 'src/http/server.ts'], {
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'warn',
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, REDIS_URL: redisUrl, REPLICAS: String(replicas), COLLECTION_PREFIX: prefix
    },
    stdio: 'ignore',
    detached: true
  })
  try {
    const base = `http://127.0.0.1:${port}`
    const readyz = await msUntilAnswering(`${base}/readyz`, started, 900_000)
    // the first list waits for the namespace's catalog (read in the background since start-up); a request
    // that outlasts the service's request timeout answers 503 and is asked again
    const listed = performance.now()
    let tries = 0
    let firstRefusal: string | undefined
    for (;;) {
      tries += 1
      const r = await fetch(`${base}/documents?namespace=${NAMESPACE}`)
      const body = await r.json() as { total?: number; code?: string; message?: string }
      if (r.ok) {
        return {
          readyz_ms: readyz, first_list_ms: Math.round(performance.now() - listed), list_tries: tries, documents: body.total ?? -1,
          ...(firstRefusal ? { first_refusal: firstRefusal } : {})
        }
      }
      firstRefusal ??= `${r.status} ${body.code}: ${body.message?.slice(0, 200)}`
      if (performance.now() - listed > 900_000) throw new Error(`GET /documents: ${r.status} ${JSON.stringify(body)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  } finally {
    process.kill(-child.pid!, 'SIGTERM')
    await new Promise((r) => child.once('exit', r))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const results = []
for (const chunks of sizes) {
  const prefix = `rs${Date.now().toString(36)}_`
  const loadMs = await load(prefix, chunks)
  const row = { chunks, load_ms: loadMs, replicas_2: await start(prefix, 2), ...(chunks <= beforeUpTo ? { replicas_1: await start(prefix, 1) } : {}) }
  console.error(JSON.stringify(row))
  results.push(row)
  await fetch(`${qdrantUrl}/collections/${prefix}chunks`, { method: 'DELETE' })
}
mkdirSync('bench/results', { recursive: true })
writeFileSync('bench/results/replica-startup.json', `${JSON.stringify({
  generated_by: 'bench/replica-startup.ts', measured_at: new Date().toISOString(), machine: '2 cores shared with other jobs',
  what: 'a server (tsx src/http/server.ts) over Qdrant (vector + lexical leg) and Redis, one namespace of N synthetic chunks (4 per document, random unit 512-d vectors): ms from spawn to /readyz 200, then to the first GET /documents of the namespace. REPLICAS=2: catalog read on first use; REPLICAS=1: every namespace read before ready (as every replica did before)',
  command: `npx tsx bench/replica-startup.ts ${sizes.join(',')}${Number.isFinite(beforeUpTo) ? ` ${beforeUpTo}` : ''}`,
  results
}, null, 2)}\n`)
console.log(JSON.stringify(results, null, 2))
