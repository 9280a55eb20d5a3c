/**
 * What a bench reads of the Neo4j server it started (`scripts/neo4j/server.ts`): its JVM's CPU time and memory, the bytes of
 * its data directory, and the parameter bytes a connection's writes hand it.
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ManagedTransaction } from 'neo4j-driver'
import type { Neo4jConnection } from '../../src/providers/neo4j/connection.js'

/** CPU time of a process (all its threads), in ms, from /proc (0 without one). */
export async function serverCpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0
  // fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second here)
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Bytes of a Neo4j data directory's store files and transaction logs. */
export async function storeBytes(dir: string): Promise<Record<string, number>> {
  const size = async (path: string): Promise<number> => {
    const entries = await readdir(path, { withFileTypes: true }).catch(() => [])
    let total = 0
    for (const entry of entries) {
      const full = join(path, entry.name)
      total += entry.isDirectory() ? await size(full) : (await stat(full)).size
    }
    return total
  }
  return { store: await size(join(dir, 'data', 'databases', 'neo4j')), transaction_logs: await size(join(dir, 'data', 'transactions', 'neo4j')) }
}

/** A JVM's resident MiB (/proc) and its heap's used and committed MiB (`jstat -gc`: survivor, eden and old spaces). */
export async function jvmMemory(pid: number): Promise<Record<string, number>> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const residentKib = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1])
  const [header, values] = (await promisify(execFile)('jstat', ['-gc', String(pid)])).stdout.trim().split('\n').map((line) => line.trim().split(/\s+/))
  const kib = (column: string) => Number(values![header!.indexOf(column)])
  const mib = (x: number) => Math.round(x / 1024)
  return {
    resident: mib(residentKib),
    heap_used: mib(kib('S0U') + kib('S1U') + kib('EU') + kib('OU')),
    heap_committed: mib(kib('S0C') + kib('S1C') + kib('EC') + kib('OC'))
  }
}

/**
 * The connection with the parameter bytes of its writes (their JSON: what a write hands the server to store) added to
 * `sent.bytes`, through every view a store names of it; reads are not counted.
 */
export function countedView(connection: Neo4jConnection, sent: { bytes: number }): Neo4jConnection {
  const size = (params: unknown) => Buffer.byteLength(JSON.stringify(params ?? {}, (_k, v: unknown) => typeof v === 'bigint' ? Number(v) : v))
  return Object.assign(Object.create(connection) as Neo4jConnection, {
    run: (cypher: string, params?: Record<string, unknown>, mode?: 'READ' | 'WRITE', signal?: AbortSignal) => {
      if (mode !== 'READ') sent.bytes += size(params)
      return connection.run(cypher, params, mode, signal)
    },
    write: <T>(work: (tx: ManagedTransaction) => Promise<T>) => connection.write((tx) => work(Object.assign(Object.create(tx) as ManagedTransaction, {
      run: (cypher: string, params?: Record<string, unknown>) => { sent.bytes += size(params); return tx.run(cypher, params) }
    }))),
    named: (backend: string) => countedView(connection.named(backend), sent)
  })
}
