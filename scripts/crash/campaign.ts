/**
 * The crash campaign (docs/operations.md, "Reliability"): the service on its embedded default is killed with SIGKILL at
 * random moments during a mixed ingest (documents through REST, through the MCP tool `ingest` and, with `cliArgs`,
 * through the ingest CLI over HTTP; graph, Episodes, deletes) and restarted, round after
 * round, in one DATA_DIR. After each restart every store is checked against what was acknowledged before
 * the kill and what was in flight: each document, entity and Episode wholly present or wholly absent, as
 * the last acknowledged write left it or as an in-flight write would, the lexical and vector legs agreeing
 * on every document's chunk ids. `scripts/crash.ts` runs it by hand; a vitest test runs 20 rounds.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { startServer, type ServerProcess } from '../lib/server-process.js'

export interface CampaignOptions {
  rounds: number
  /** Seeds the random choice of writes and kill moments, so a failing campaign can be replayed. */
  seed?: number
  /** Node arguments that start the service, e.g. `['dist/src/http/server.js']`; default the sources under tsx. */
  serverArgs?: string[]
  /**
   * Node arguments that run the ingest CLI, e.g. `['dist/src/cli/ingest.js']` (plain node: tsx takes tens of seconds to
   * start on a busy machine): a third of the document writes then go through it over HTTP, one file per run. Without
   * it, document writes come through REST and the MCP tool only.
   */
  cliArgs?: string[]
  /**
   * Kill this many ms after the writers start, uniformly in [min, max]. Default 300..3000. With `cliArgs`, counted from
   * the round's first acknowledged CLI write instead (a CLI run takes seconds to start), or from `cliWaitMs` after the
   * writers started when none came by then.
   */
  killAfterMs?: [number, number]
  /** With `cliArgs`: how long a round waits for a CLI write to be acknowledged before the kill window starts. Default 60 s. */
  cliWaitMs?: number
  log?: (line: string) => void
  /** Hears the report so far after every round (e.g. to save it, so a long run stopped early keeps its figures). */
  onRound?: (report: CampaignReport) => void
}

export interface CampaignReport {
  rounds: number
  kills: number
  /** Writes acknowledged (200) before a kill and not found after the restart: must be 0. */
  acknowledged_lost: number
  /** Items found in a state no acknowledged or in-flight write leaves (half a document, legs apart, an entity without its relation): must be 0. */
  half_present: number
  acknowledged_writes: number
  in_flight_at_kill: number
  /** Restarts that failed to open the data (an unreadable file): must be 0. */
  failed_restarts: number
  /** Document upserts by the door they came through: acknowledged, and in flight at a kill. */
  document_upserts_by_door: Record<Door, { acknowledged: number; in_flight_at_kill: number }>
  problems: string[]
  took_ms: number
}

const DOCS = 10
const ENTITIES = 10
const EPISODES = 8
const WRITERS = 3

/** What one item holds after a write: a document's version, or null for absent; entities and Episodes: present or not. */
type DocState = number | null
type Door = 'rest' | 'mcp' | 'cli'
interface Pending { key: string; after: DocState | boolean; door?: Door; replay?: () => Promise<void> }

function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s / 2 ** 32
  }
}

// Each document has a token of its own (`crashdocN`) and each version one (`verN`) in every chunk, so the
// lexical leg finds exactly its chunks and the text tells which version a chunk is of.
function docText(d: number, version: number): string {
  const sections = 1 + (version % 3)
  let text = `# 文档 ${d}\n\n编号 crashdoc${d} ver${version} 第一段，讨论差旅报销。`
  for (let s = 0; s < sections; s++) text += `\n\n## 第 ${s + 2} 节\n\n编号 crashdoc${d} ver${version} 的第 ${s + 2} 段，讨论咳嗽随访与住宿标准。`
  return text
}
const docId = (d: number) => `crash-doc-${d}`
const chunksOf = (d: number, version: number) => chunkDocument({ id: docId(d), text: docText(d, version) }).length

const entityName = (k: number) => `crashent${k}x`
function graphBody(k: number): object {
  return {
    entities: [{ id: 'crash-hub', name: 'crashhubx' }, { id: `ce-${k}`, name: entityName(k), description: `崩溃测试实体 ${k}` }],
    relations: [{ source: `ce-${k}`, target: 'crash-hub', type: 'link' }]
  }
}

function episodeBody(k: number): object {
  return {
    entities: [{ id: 'crash-ep-hub', name: '崩溃测试中心实体', description: '每个崩溃测试事件都提到它' }],
    episodes: [{
      id: `crash-ep-${k}`, name: `崩溃测试事件 ${k}`, summary: `第 ${k} 个崩溃测试事件：一次写入被杀死又重启的过程。`,
      created_at: '2025-06-09T10:00:00Z',
      entities: [{ id: 'crash-ep-hub', description: '事件涉及的中心实体' }],
      facets: [0, 1].map((f) => ({
        id: `crash-ep-${k}-f${f}`, search_text: `崩溃测试事件 ${k} 的第 ${f} 个方面：写入与恢复`, facet_type: 'topic',
        description: `事件 ${k} 方面 ${f}`, anchor_text: `事件 ${k} 在重启后应当完整存在或完全不存在`
      }))
    }]
  }
}

/** The MCP tool `ingest` (one stateless JSON-RPC POST): 200 when the tool wrote, else the status of its failure. */
async function sendMcpIngest(base: string, args: object): Promise<number> {
  const r = await fetch(`${base}/mcp`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ingest', arguments: args } })
  })
  if (!r.ok) return r.status
  const answer = await r.json() as { result?: { isError?: boolean }; error?: unknown }
  return answer.result && !answer.result.isError ? 200 : 500
}

/** The CLI failed while the service was up: its exit and what it said. */
class CliFailure extends Error {}

/**
 * The ingest CLI over HTTP (`--url`, `--json`) on one Markdown file named for the document (its id is the file's name):
 * 200 when it exited 0 and reported that file ingested or replaced; a CliFailure otherwise.
 */
async function sendCli(cliArgs: string[], base: string, dir: string, d: number, version: number): Promise<number> {
  await mkdir(dir, { recursive: true })
  const file = join(dir, `${docId(d)}.md`)
  await writeFile(file, docText(d, version))
  const child = spawn(process.execPath, [...cliArgs, '--url', base, '--json', file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => { out += String(chunk) })
  child.stderr.on('data', (chunk) => { err += String(chunk) })
  const code = await new Promise<number | null>((resolve) => child.once('close', (exit) => resolve(exit)))
  await rm(dir, { recursive: true, force: true })
  const report = code === 0 ? JSON.parse(out) as { files: { id?: string; outcome: string }[] } : undefined
  const line = report?.files.find((f) => f.id === docId(d))
  if (line && (line.outcome === 'ingested' || line.outcome === 'replaced')) return 200
  throw new CliFailure(`the CLI exited ${code}: ${(line ? JSON.stringify(line) : err || out).slice(-2000)}`)
}

async function send(url: string, method: string, body?: object): Promise<number> {
  const r = await fetch(url, {
    method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {})
  })
  await r.arrayBuffer()
  return r.status
}

async function json<T>(url: string, body?: object): Promise<T> {
  const r = await fetch(url, body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {})
  if (!r.ok) throw new Error(`${body ? 'POST' : 'GET'} ${url}: ${r.status} ${await r.text()}`)
  return r.json() as Promise<T>
}

interface Bundle { recall_bundle: { id: string; text: string; metadata: Record<string, unknown> }[] }

export async function runCrashCampaign(options: CampaignOptions): Promise<CampaignReport> {
  const started = performance.now()
  const rand = random(options.seed ?? 18)
  const log = options.log ?? (() => undefined)
  const [killMin, killMax] = options.killAfterMs ?? [300, 3000]
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-crash-campaign-'))
  // The graph's and the Episodes' counts are checked against what was imported alone: documents derive neither here.
  const env = { DATA_DIR: dataDir, DEMO_DATA: 'false', MCP_INGEST_TOOL: 'true', DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' }
  const start = (): Promise<ServerProcess> => startServer(env, { ...(options.serverArgs ? { args: options.serverArgs } : {}), timeoutMs: 180_000 })

  const docs = new Map<number, DocState>(Array.from({ length: DOCS }, (_, d) => [d, null]))
  const entities = new Map<number, boolean>(Array.from({ length: ENTITIES }, (_, k) => [k, false]))
  const episodes = new Map<number, boolean>(Array.from({ length: EPISODES }, (_, k) => [k, false]))
  const nextVersion = new Map<number, number>()
  const report: CampaignReport = {
    rounds: 0, kills: 0, acknowledged_lost: 0, half_present: 0, acknowledged_writes: 0, in_flight_at_kill: 0, failed_restarts: 0,
    document_upserts_by_door: { rest: { acknowledged: 0, in_flight_at_kill: 0 }, mcp: { acknowledged: 0, in_flight_at_kill: 0 }, cli: { acknowledged: 0, in_flight_at_kill: 0 } },
    problems: [], took_ms: 0
  }
  const cliDir = await mkdtemp(join(tmpdir(), 'recall-crash-cli-'))
  let cliRuns = 0
  const problem = (kind: 'lost' | 'half', what: string) => {
    if (kind === 'lost') report.acknowledged_lost++
    else report.half_present++
    if (report.problems.length < 50) report.problems.push(`round ${report.rounds}: ${what}`)
  }

  let server = await start()
  try {
    for (let round = 1; round <= options.rounds; round++) {
      report.rounds = round
      const base = server.url
      const inFlight = new Map<string, Pending>()
      let stop = false
      let cliAcknowledged = () => {}
      const cliAck = new Promise<void>((resolve) => { cliAcknowledged = resolve })

      const oneWrite = async (): Promise<void> => {
        const pick = rand()
        let key: string
        let after: DocState | boolean
        let door: Door | undefined
        let request: () => Promise<number>
        if (pick < 0.4) {
          const d = Math.floor(rand() * DOCS)
          key = `doc:${d}`
          if (inFlight.has(key)) return
          if (docs.get(d) !== null && rand() < 0.3) {
            after = null
            request = () => send(`${base}/documents/${docId(d)}`, 'DELETE')
          } else {
            const version = (nextVersion.get(d) ?? 0) + 1
            nextVersion.set(d, version)
            after = version
            const body = { documents: [{ id: docId(d), text: docText(d, version) }] }
            // the doors of a document write: the route, the MCP tool and (with cliArgs) the CLI over HTTP
            const which = rand() * (options.cliArgs ? 3 : 2)
            door = which < 1 ? 'rest' : which < 2 ? 'mcp' : 'cli'
            const cliArgs = options.cliArgs
            const runDir = join(cliDir, String(cliRuns++))
            request = door === 'rest' ? () => send(`${base}/ingest/documents`, 'POST', body)
              : door === 'mcp' ? () => sendMcpIngest(base, body)
                : () => sendCli(cliArgs!, base, runDir, d, version)
          }
        } else if (pick < 0.7) {
          const k = Math.floor(rand() * ENTITIES)
          key = `ent:${k}`
          if (inFlight.has(key)) return
          after = !(entities.get(k) && rand() < 0.4)
          request = after ? () => send(`${base}/ingest/graph`, 'POST', graphBody(k)) : () => send(`${base}/entities/ce-${k}`, 'DELETE')
        } else {
          const k = Math.floor(rand() * EPISODES)
          key = `ep:${k}`
          if (inFlight.has(key)) return
          after = !(episodes.get(k) && rand() < 0.4)
          request = after ? () => send(`${base}/ingest/episodes`, 'POST', episodeBody(k)) : () => send(`${base}/episodes/crash-ep-${k}`, 'DELETE')
        }
        const pending: Pending = { key, after, ...(door ? { door } : {}) }
        inFlight.set(key, pending)
        let status: number
        try {
          status = await request()
        } catch (error) {
          if (error instanceof CliFailure && !stop) throw new Error(`${key}: ${error.message} before the kill`)
          return // killed: stays in flight
        }
        // a delete of something absent answers 404, and leaves it absent as the model says
        if (status === 200 || (status === 404 && after !== true && typeof after !== 'number')) {
          inFlight.delete(key)
          report.acknowledged_writes++
          if (door) report.document_upserts_by_door[door].acknowledged++
          if (door === 'cli') cliAcknowledged()
          const [kind, n] = [key.slice(0, key.indexOf(':')), Number(key.slice(key.indexOf(':') + 1))]
          if (kind === 'doc') docs.set(n, after as DocState)
          else if (kind === 'ent') entities.set(n, after as boolean)
          else episodes.set(n, after as boolean)
        } else if (!stop) {
          throw new Error(`${key}: the service answered ${status} before the kill`)
        }
      }

      const writers = Array.from({ length: WRITERS }, async () => {
        while (!stop) await oneWrite()
      })
      const writerErrors = Promise.allSettled(writers)
      const delay = killMin + rand() * (killMax - killMin)
      if (options.cliArgs) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([cliAck, new Promise((resolve) => { timer = setTimeout(resolve, options.cliWaitMs ?? 60_000) })])
        clearTimeout(timer)
      }
      await new Promise((resolve) => setTimeout(resolve, delay))
      stop = true
      await server.kill('SIGKILL')
      report.kills++
      const settled = await writerErrors
      for (const s of settled) if (s.status === 'rejected') throw s.reason
      report.in_flight_at_kill += inFlight.size
      for (const p of inFlight.values()) if (p.door) report.document_upserts_by_door[p.door].in_flight_at_kill++

      try {
        server = await start()
      } catch (error) {
        report.failed_restarts++
        report.problems.push(`round ${round}: restart failed: ${String(error).slice(0, 2000)}`)
        break
      }
      await check(server.url, inFlight)
      const cli = report.document_upserts_by_door.cli
      log(`round ${round}: ${report.acknowledged_writes} acknowledged so far (CLI ${cli.acknowledged}), ${inFlight.size} in flight at the kill, lost ${report.acknowledged_lost}, half ${report.half_present}`)
      report.took_ms = Math.round(performance.now() - started)
      options.onRound?.(report)
    }
  } finally {
    await server.kill('SIGKILL')
    await rm(dataDir, { recursive: true, force: true })
    await rm(cliDir, { recursive: true, force: true })
  }
  report.took_ms = Math.round(performance.now() - started)
  return report

  /** Checks every store after a restart, then takes what it found as the acknowledged state. */
  async function check(base: string, inFlight: Map<string, Pending>): Promise<void> {
    const allowed = <T>(key: string, acked: T): T[] => {
      const p = inFlight.get(key)
      return p ? [acked, p.after as T] : [acked]
    }

    // documents: the catalog, and both legs, chunk by chunk
    const list = await json<{ documents: { id: string; chunks: number }[] }>(`${base}/documents`)
    const listed = new Map(list.documents.map((d) => [d.id, d.chunks]))
    for (let d = 0; d < DOCS; d++) {
      const id = docId(d)
      const lexical = (await json<Bundle>(`${base}/retrieve`, { mode: 'hybrid', query: `crashdoc${d}`, legs: ['lexical'], top_k: 100 }))
        .recall_bundle.filter((i) => i.id.startsWith(`${id}#`))
      const vector = (await json<Bundle>(`${base}/retrieve`, { mode: 'hybrid', query: `crashdoc${d}`, legs: ['vector'], top_k: 100, filter: { doc_ids: [id] } }))
        .recall_bundle
      const versions = new Set(lexical.map((i) => /ver(\d+)/.exec(i.text)?.[1]).map(Number))
      const found: DocState = listed.has(id) ? (versions.size === 1 ? [...versions][0]! : -1) : null
      const lexIds = lexical.map((i) => i.id).sort()
      const vecIds = vector.map((i) => i.id).sort()
      if (JSON.stringify(lexIds) !== JSON.stringify(vecIds)) problem('half', `${id}: lexical leg has [${lexIds.join(',')}], vector leg [${vecIds.join(',')}]`)
      if (found === null) {
        if (lexIds.length > 0) problem('half', `${id}: absent from the catalog, but the lexical leg has ${lexIds.length} chunks`)
      } else if (found === -1) {
        problem('half', `${id}: listed, but its chunks are of versions [${[...versions].join(',')}]`)
      } else if (listed.get(id) !== chunksOf(d, found) || lexIds.length !== chunksOf(d, found)) {
        problem('half', `${id} version ${found}: ${listed.get(id)} chunks listed, ${lexIds.length} found, ${chunksOf(d, found)} expected`)
      }
      const ok = allowed<DocState>(`doc:${d}`, docs.get(d)!)
      if (found !== -1 && !ok.includes(found)) problem('lost', `${id}: found ${String(found)}, acknowledged ${String(docs.get(d))}`)
      docs.set(d, found === -1 ? null : found)
    }

    // entities: each with its relation to the hub, or neither
    for (let k = 0; k < ENTITIES; k++) {
      const hits = (await json<Bundle>(`${base}/retrieve`, { mode: 'graphrag', query: entityName(k), top_k: 10 })).recall_bundle
      const item = hits.find((i) => i.id === `ce-${k}`)
      const relations = (item?.metadata.relations ?? []) as { source: string; target: string; type: string }[]
      if (item && !relations.some((r) => r.source === `ce-${k}` && r.target === 'crash-hub' && r.type === 'link')) {
        problem('half', `ce-${k}: present without its relation to the hub`)
      }
      const present = Boolean(item)
      if (!allowed(`ent:${k}`, entities.get(k)!).includes(present)) problem('lost', `ce-${k}: found ${present}, acknowledged ${entities.get(k)}`)
      entities.set(k, present)
    }

    // counts agree with the items: one relation per entity, the hub besides; Episodes within what the writes allow
    const namespaces = await json<{ namespaces: { namespace: string; documents: number; entities: number; relations: number; episodes: number }[] }>(`${base}/namespaces`)
    const counts = namespaces.namespaces.find((n) => n.namespace === 'default') ?? { documents: 0, entities: 0, relations: 0, episodes: 0 }
    const presentEntities = [...entities.values()].filter(Boolean).length
    if (counts.relations !== presentEntities) problem('half', `${counts.relations} relations for ${presentEntities} entities`)
    if (counts.documents !== listed.size) problem('half', `${counts.documents} documents counted, ${listed.size} listed`)
    let low = 0
    let high = 0
    for (let k = 0; k < EPISODES; k++) {
      const options = allowed(`ep:${k}`, episodes.get(k)!)
      low += options.every(Boolean) ? 1 : 0
      high += options.some(Boolean) ? 1 : 0
    }
    if (counts.episodes < low || counts.episodes > high) problem('lost', `${counts.episodes} Episodes, between ${low} and ${high} expected`)
    // which in-flight Episode writes landed is not visible one by one: they are written again, so the model is exact
    for (const [key, p] of inFlight) {
      if (!key.startsWith('ep:')) continue
      const k = Number(key.slice(3))
      const status = p.after
        ? await send(`${base}/ingest/episodes`, 'POST', episodeBody(k))
        : await send(`${base}/episodes/crash-ep-${k}`, 'DELETE')
      if (status !== 200 && status !== 404) throw new Error(`${key}: settling answered ${status}`)
      episodes.set(k, p.after as boolean)
    }
  }
}
