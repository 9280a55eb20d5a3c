/**
 * What a knowledge graph store's derived write costs as a namespace grows (the embedded store, or with `--store neo4j`
 * the Neo4j store, each tree over a Neo4j server of its own): the contributions of N synthetic CMRC
 * documents (`bench/lib/synthetic.ts`, one chunk each, derived once up front with this tree's `deriveDocument`) written
 * with `replaceDerived` in batches of 100 documents, as the write path writes them, into an on-disk store of this tree
 * and, with `--base DIR`, one of another tree beside it, each in a process of its own, batch by batch in alternating order. Derivation itself and the
 * rest of the write are left out: only the store's write is timed.
 *
 *   npx tsx bench/kg-derived-write.ts [--documents 50000] [--base ../wt-before] [--segment 5000] [--out FILE]
 *     [--store embedded|neo4j] [--neo4j-heap 2g]
 *     [--node-args='--cpu-prof --cpu-prof-dir=DIR']   (given to each tree's process)
 *
 * Prints JSON: per segment of documents, each tree's wall-clock ms and its process's CPU ms per document (the CPU time is
 * what a busy machine does not inflate), its heap, and the namespace's size after it; and the pauses a compaction can
 * cause: each batch's own time (p50, p99 and max of the segment's batches, ms) and the longest event-loop delay the
 * store's process saw during the segment (`perf_hooks.monitorEventLoopDelay`, 10 ms resolution); and, since both are
 * inflated on a busy machine, the CPU time of the store's main thread from one batch's answer to the next
 * (`process.threadCpuUsage`: all the event loop did, a compaction run between the batches included, a fold thread's
 * work not), as p50, p99 and max of the segment's batches. With `--store neo4j` each tree's store writes to a Neo4j server
 * this bench starts for it (`scripts/neo4j/server.ts`, `--neo4j-heap`, default 2g), and each segment also gives the
 * server's CPU ms per document (its JVM's CPU time, from /proc) and the bytes of its store files and transaction logs (the
 * store files are flushed at checkpoints only, so the sum is what the data takes on disk then); at the end, both again
 * after a clean stop (`store_bytes_after_stop`), and the server JVM's resident bytes (/proc) and heap, used and committed
 * (`jstat -gc`, young and old generations), at each segment's end. With `--out`, the report so far is written after each
 * segment (`partial: true`), so a stopped run keeps the segments it finished.
 */
import { fork } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'
import type { KgContribution } from '../src/providers/knowledge-graph/port.js'
import { loadCmrc } from './lib/cmrc.js'
import { jvmMemory, serverCpuMs, storeBytes } from './lib/neo4j-process.js'
import { syntheticDocuments } from './lib/synthetic.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    documents: { type: 'string', default: '50000' }, base: { type: 'string' }, segment: { type: 'string', default: '5000' }, out: { type: 'string' },
    worker: { type: 'string' }, 'node-args': { type: 'string' }, store: { type: 'string', default: 'embedded' }, 'neo4j-heap': { type: 'string', default: '2g' }
  }
})
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const load = () => round(loadavg()[0]!, 1)
/** The q-quantile of `xs` by the nearest rank. */
const quantile = (xs: readonly number[], q: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!

const options = derivationOptions()
const docs = syntheticDocuments((await loadCmrc()).documents.map((d) => d.text), Number(args.documents))
const derived = (): Array<[string, KgContribution]> => docs.map((d) => [d.id, deriveDocument([{ id: `${d.id}#0`, text: d.text }], options)])

// each tree's store in a process of its own (one heap's garbage never pauses the other), stepped batch by batch
const worker = process.argv.includes('--worker')
if (worker) {
  const contributions = derived()
  const tree = loadTree('tree', process.argv[process.argv.indexOf('--worker') + 1]!)
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-write-'))
  const server = args.store === 'neo4j' ? await (await import('../scripts/neo4j/server.js')).startNeo4j({ heap: args['neo4j-heap'], dataDir: dir }) : undefined
  const store = server
    ? new (await tree.module('src/providers/knowledge-graph/neo4j.ts')).Neo4jKnowledgeGraphStore({
        connection: (await tree.module('src/providers/neo4j/connection.ts')).createNeo4jConnection({ uri: server.uri, timeoutMs: 60_000, writeTimeoutMs: 600_000 })
      })
    : new (await tree.module('src/providers/knowledge-graph/embedded.ts')).EmbeddedKnowledgeGraphStore({ dir })
  await store.init()
  const segment = Number(args.segment)
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  let threadCpu = process.threadCpuUsage()
  process.on('message', async (batch: number) => {
    if (batch < 0) {
      await store.close()
      // Neo4j Community has no checkpoint procedure: its store files are measured once a clean stop has flushed them
      await server?.stop()
      process.send!({ final_store_bytes: server ? await storeBytes(dir) : undefined }, () => {
        void rm(dir, { recursive: true, force: true }).then(() => process.exit(0))
      })
      return
    }
    const server0 = await serverCpuMs(server?.pid)
    const t0 = performance.now()
    const cpu0 = process.cpuUsage()
    await store.replaceDerived('bench', new Map(contributions.slice(batch * 100, batch * 100 + 100)))
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    const eventLoopMaxMs = delay.max / 1e6
    delay.reset()
    const mainCpu = process.threadCpuUsage(threadCpu)
    threadCpu = process.threadCpuUsage()
    const serverMs = server ? (await serverCpuMs(server.pid)) - server0 : 0
    const segmentEnd = ((batch + 1) * 100) % segment === 0 || (batch + 1) * 100 >= docs.length
    process.send!({
      ms, cpu_ms: (cpu.user + cpu.system) / 1000, main_cpu_ms: (mainCpu.user + mainCpu.system) / 1000, event_loop_max_ms: eventLoopMaxMs,
      server_cpu_ms: serverMs, ...(server && segmentEnd ? { store_bytes: await storeBytes(dir), jvm: await jvmMemory(server.pid!) } : {}),
      size: await store.count('bench'), heap_mib: Math.round(process.memoryUsage().heapUsed / 2 ** 20)
    })
  })
  process.send!('ready')
} else {
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const sides = await Promise.all(trees.map(async (tree) => {
    const child = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--worker', tree.dir], { execArgv: ['--import', 'tsx', ...(args['node-args']?.split(' ').filter(Boolean) ?? [])] })
    await new Promise((ready) => child.once('message', ready))
    return { tree, child, ms: 0, cpuMs: 0, serverCpuMs: 0, batches: [] as number[], mainCpu: [] as number[], eventLoopMaxMs: 0, last: {} as Record<string, unknown> }
  }))
  const step = (side: (typeof sides)[number], batch: number) => new Promise<void>((done) => {
    side.child.once('message', (reply: {
      ms: number; cpu_ms: number; main_cpu_ms: number; event_loop_max_ms: number; server_cpu_ms: number; store_bytes?: Record<string, number>
      jvm?: Record<string, number>; size: unknown; heap_mib: number
    }) => {
      side.ms += reply.ms
      side.cpuMs += reply.cpu_ms
      side.serverCpuMs += reply.server_cpu_ms
      if (reply.store_bytes) side.last['store_bytes'] = reply.store_bytes
      if (reply.jvm) side.last['jvm'] = reply.jvm
      side.batches.push(reply.ms)
      side.mainCpu.push(reply.main_cpu_ms)
      side.eventLoopMaxMs = Math.max(side.eventLoopMaxMs, reply.event_loop_max_ms)
      Object.assign(side.last, { size: reply.size, heap_mib: reply.heap_mib })
      done()
    })
    side.child.send(batch)
  })
  const segment = Number(args.segment)
  const segments: Record<string, unknown>[] = []
  let loads: number[] = []
  const startedAt = loadavg().map((x) => round(x, 1))
  const report = (rest: Record<string, unknown>) => ({
    generated_by: 'bench/kg-derived-write.ts', at: new Date().toISOString(), store: args.store, documents: docs.length, batch_documents: 100,
    trees: Object.fromEntries(sides.map((s) => [s.tree.name, { dir: s.tree.dir, commit: s.tree.commit }])),
    load_average_at_start: startedAt, load_average_at_end: loadavg().map((x) => round(x, 1)), segments, ...rest
  })
  for (let i = 0, b = 0; i < docs.length; i += 100, b++) {
    for (const side of b % 2 === 0 ? sides : [...sides].reverse()) await step(side, b)
    loads.push(load())
    const written = Math.min(i + 100, docs.length)
    if (written % segment === 0 || written === docs.length) {
      const row: Record<string, unknown> = { documents_written: written, ...(sides[0]!.last['size'] as object), load_average_1m_mean: round(loads.reduce((a, x) => a + x, 0) / loads.length, 1) }
      for (const side of sides) {
        Object.assign(row, {
          [`${side.tree.name}_ms_per_document`]: round(side.ms / segment), [`${side.tree.name}_cpu_ms_per_document`]: round(side.cpuMs / segment),
          [`${side.tree.name}_heap_mib`]: side.last['heap_mib'],
          [`${side.tree.name}_batch_ms`]: { p50: round(quantile(side.batches, 0.5), 1), p99: round(quantile(side.batches, 0.99), 1), max: round(Math.max(...side.batches), 1) },
          [`${side.tree.name}_main_thread_cpu_ms`]: { p50: round(quantile(side.mainCpu, 0.5), 1), p99: round(quantile(side.mainCpu, 0.99), 1), max: round(Math.max(...side.mainCpu), 1) },
          [`${side.tree.name}_event_loop_max_ms`]: round(side.eventLoopMaxMs, 1),
          ...(args.store === 'neo4j'
            ? {
                [`${side.tree.name}_server_cpu_ms_per_document`]: round(side.serverCpuMs / segment), [`${side.tree.name}_store_bytes`]: side.last['store_bytes'],
                [`${side.tree.name}_server_jvm_mib`]: side.last['jvm']
              }
            : {})
        })
      }
      if (sides.length === 2) {
        Object.assign(row, { this_over_base: round(sides[0]!.ms / sides[1]!.ms), this_over_base_cpu: round(sides[0]!.cpuMs / sides[1]!.cpuMs) })
        if (args.store === 'neo4j') Object.assign(row, { this_over_base_server_cpu: round(sides[0]!.serverCpuMs / sides[1]!.serverCpuMs) })
      }
      segments.push(row)
      console.error(JSON.stringify(row))
      if (args.out) await writeFile(args.out, `${JSON.stringify(report({ partial: true }), null, 2)}\n`)
      for (const side of sides) {
        side.ms = side.cpuMs = side.serverCpuMs = side.eventLoopMaxMs = 0
        side.batches = []
        side.mainCpu = []
      }
      loads = []
    }
  }
  const finalStoreBytes: Record<string, unknown> = {}
  for (const side of sides) {
    const exited = new Promise((exit) => side.child.once('exit', exit))
    side.child.once('message', (reply: { final_store_bytes?: Record<string, number> }) => { finalStoreBytes[side.tree.name] = reply.final_store_bytes })
    side.child.send(-1)
    await exited
  }
  const text = JSON.stringify(report({ ...(args.store === 'neo4j' ? { store_bytes_after_stop: finalStoreBytes } : {}) }), null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}
