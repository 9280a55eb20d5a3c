/**
 * The Neo4j store's derived write, one document at a time, as the namespace grows: `replaceDerived` of each of N synthetic
 * CMRC documents (`bench/lib/synthetic.ts`, one chunk each, derived by the rules with the default options) into one
 * namespace, each timed alone; the mean and median ms per write over the first and the last `--window` documents.
 * Contributions are derived before the clock starts: only the store's write is timed.
 *
 *   npx tsx bench/neo4j-derived-write.ts [--docs 10000] [--window 1000] [--fill-batch N] [--baseline DIR] [--uri bolt://…] [--out FILE]
 *
 * `--fill-batch N`: the documents between the first and the last window are written N to a derived write, untimed
 * (to reach a large namespace sooner); the windows' documents are still written and timed one at a time.
 *
 * `--baseline DIR` writes every document also through the Neo4j store of a checkout at DIR (say a worktree of main),
 * into its own labels of the same server, alternating which store writes first: the two side by side in one run, and
 * their ratio per window. Each write's parameter bytes (their JSON: what it hands the server to store) are counted per
 * arm too (`sent_bytes_a_write`, first and last window). Without `--uri` it starts its own Neo4j (`scripts/neo4j/server.ts`, 2 GB heap) and stops it
 * at the end. Prints JSON (and writes it to `--out`).
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'
import { Neo4jKnowledgeGraphStore } from '../src/providers/knowledge-graph/neo4j.js'
import type { KgContribution, KnowledgeGraphStore } from '../src/providers/knowledge-graph/port.js'
import { createNeo4jConnection, type Neo4jConnection } from '../src/providers/neo4j/connection.js'
import { startNeo4j } from '../scripts/neo4j/server.js'
import { loadCmrc } from './lib/cmrc.js'
import { countedView } from './lib/neo4j-process.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values: args } = parseArgs({ options: {
  docs: { type: 'string', default: '10000' }, window: { type: 'string', default: '1000' },
  baseline: { type: 'string' }, 'fill-batch': { type: 'string' }, uri: { type: 'string' }, out: { type: 'string' }
} })
const N = Number(args.docs)
const WINDOW = Number(args.window)
const FILL = args['fill-batch'] ? Number(args['fill-batch']) : 1
const NS = 'bench'
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits

const documents = syntheticDocuments((await loadCmrc()).documents.map((d) => d.text), N)
if (documents.length < N) throw new Error(`only ${documents.length} synthetic documents`)
const options = derivationOptions()
const contributions: KgContribution[] = documents.map((d) =>
  deriveDocument([{ id: `${d.id}#0`, text: d.text }], options))

const server = args.uri ? undefined : await startNeo4j({ heap: '2g' })
const uri = args.uri ?? server!.uri
/** `bytes`: per timed write, the parameter bytes it sent (`sent` counts them as they go). */
interface Arm { name: string; store: KnowledgeGraphStore; ms: number[]; sent: { bytes: number }; bytes: number[] }
const run = Date.now().toString(36)
/** Bytes of the parameters an arm's writes send (their JSON), added to `sent.bytes`: what a write hands the server to store. */
const counted = (sent: { bytes: number }): Neo4jConnection => countedView(createNeo4jConnection({ uri, timeoutMs: 30_000, writeTimeoutMs: 600_000 }), sent)
const arm = (name: string, make: (connection: Neo4jConnection) => KnowledgeGraphStore): Arm => {
  const sent = { bytes: 0 }
  return { name, store: make(counted(sent)), ms: [], sent, bytes: [] }
}
const arms: Arm[] = [arm('this', (connection) => new Neo4jKnowledgeGraphStore({ connection, labelPrefix: `BenchThis${run}` }))]
if (args.baseline) {
  const module = await import(resolve(args.baseline, 'src/providers/knowledge-graph/neo4j.ts')) as { Neo4jKnowledgeGraphStore: typeof Neo4jKnowledgeGraphStore }
  arms.push(arm('baseline', (connection) => new module.Neo4jKnowledgeGraphStore({ connection, labelPrefix: `BenchBase${run}` })))
}

const loadBefore = loadavg()
const started = Date.now()
try {
  for (const arm of arms) await arm.store.init()
  for (let i = 0; i < N; i++) {
    const order = i % 2 === 0 ? arms : [...arms].reverse()
    if (FILL > 1 && i >= WINDOW && i < N - WINDOW) {
      const end = Math.min(i + FILL, N - WINDOW)
      const batch = new Map(documents.slice(i, end).map((d, k) => [d.id, contributions[i + k]!]))
      for (const arm of order) await arm.store.replaceDerived(NS, batch)
      i = end - 1
      continue
    }
    for (const arm of order) {
      const t = performance.now()
      const before = arm.sent.bytes
      await arm.store.replaceDerived(NS, new Map([[documents[i]!.id, contributions[i]!]]))
      arm.ms.push(performance.now() - t)
      arm.bytes.push(arm.sent.bytes - before)
    }
    if ((i + 1) % 1000 === 0 && arms[0]!.ms.length % 1000 === 0) {
      console.error(`${i + 1}/${N}: ${arms.map((a) => `${a.name} ${round(mean(a.ms.slice(-1000)))} ms`).join(', ')}, load ${loadavg().map((l) => round(l)).join(' ')}`)
    }
  }
  const windows = (a: Arm) => ({
    first: stats(a.ms.slice(0, WINDOW)), last: stats(a.ms.slice(-WINDOW)),
    last_over_first: round(mean(a.ms.slice(-WINDOW)) / mean(a.ms.slice(0, WINDOW))),
    sent_bytes_a_write: { first: byteStats(a.bytes.slice(0, WINDOW)), last: byteStats(a.bytes.slice(-WINDOW)) }
  })
  const result: Record<string, unknown> = {
    bench: 'neo4j-derived-write', docs: N, window: WINDOW, fill_batch: FILL, server: args.uri ? 'given' : 'own (2g heap)',
    arms: Object.fromEntries(await Promise.all(arms.map(async (a) => [a.name, { ...windows(a), stored: await a.store.count(NS) }]))),
    ...(arms.length === 2
      ? {
          baseline_over_this: {
            first: round(mean(arms[1]!.ms.slice(0, WINDOW)) / mean(arms[0]!.ms.slice(0, WINDOW))),
            last: round(mean(arms[1]!.ms.slice(-WINDOW)) / mean(arms[0]!.ms.slice(-WINDOW)))
          }
        }
      : {}),
    seconds: round((Date.now() - started) / 1000, 1),
    load: { before: loadBefore.map((l) => round(l)), after: loadavg().map((l) => round(l)) }
  }
  const json = JSON.stringify(result, null, 2)
  console.log(json)
  if (args.out) await writeFile(args.out, `${json}\n`)
} finally {
  for (const arm of arms) {
    await arm.store.dropNamespace(NS).catch(() => {})
    await arm.store.close()
  }
  await server?.stop()
}

function mean(xs: number[]): number {
  return xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length)
}

function atQuantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

function stats(ms: number[]): { mean_ms: number; p50_ms: number; p90_ms: number; p99_ms: number; max_ms: number } {
  const sorted = [...ms].sort((a, b) => a - b)
  return { mean_ms: round(mean(ms)), p50_ms: round(atQuantile(sorted, 0.5)), p90_ms: round(atQuantile(sorted, 0.9)), p99_ms: round(atQuantile(sorted, 0.99)), max_ms: round(sorted.at(-1) ?? 0) }
}

function byteStats(bytes: number[]): { mean: number; p50: number; p99: number; max: number } {
  const sorted = [...bytes].sort((a, b) => a - b)
  return { mean: Math.round(mean(bytes)), p50: atQuantile(sorted, 0.5), p99: atQuantile(sorted, 0.99), max: sorted.at(-1) ?? 0 }
}
