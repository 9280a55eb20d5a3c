/**
 * A write killed right after the journal announced it is finished by the restart, whatever door it came by. The
 * service runs in a child process over the run's real Qdrant and Redis (the only writer, `REPLICAS=1`) with
 * `FAILPOINTS=after-journal`: it takes one write through the door and kills itself (SIGKILL) as soon as the write is
 * in the journal, before any store is touched. Restarted in the same DATA_DIR without the failpoint, it holds the
 * write complete: every document as sent (catalog, lexical and vector legs, chunk for chunk), a delete done, an
 * Episode present. Graph writes and namespace drops are one store call each and are not journalled (docs/write-path.md);
 * the entity-names write a graph write asks for is, apart (`journal/entities/`, `FAILPOINTS=after-entity-journal`).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'
import { chunkDocument } from '../../src/corpus/documents.js'
import { pointIdOf } from '../../src/providers/vector-store/qdrant.js'
import { runQdrantUrl, sharedRedisEnv } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the write-path crash tests')
const LEASE_MS = 1000

describe.skipIf(!qdrantUrl)('a write killed right after its journal record is complete after the restart', () => {
  let root: string
  const servers: ServerProcess[] = []

  beforeAll(async () => { root = await mkdtemp(join(tmpdir(), 'recall-door-crash-')) })
  afterAll(async () => {
    for (const s of servers) await s.kill('SIGKILL')
    if (root) await rm(root, { recursive: true, force: true })
  })

  /** One service's settings: its own DATA_DIR and collections, the run's Qdrant and Redis. */
  function setting(name: string): Record<string, string> {
    return {
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `crash${randomBytes(3).toString('hex')}_`, ...sharedRedisEnv(),
      REPLICAS: '1', SOLE_WRITER_LEASE_MS: String(LEASE_MS), DATA_DIR: join(root, name), DEMO_DATA: 'false', MCP_INGEST_TOOL: 'true',
      VECTOR_TIMEOUT_MS: '30000', CACHE_TTL_SECONDS: '0'
    }
  }

  async function start(env: Record<string, string>): Promise<ServerProcess> {
    const server = await startServer(env, { timeoutMs: 180_000 })
    servers.push(server)
    return server
  }

  /** Waits for the process to die by its own SIGKILL, then for its sole-writer lease to run out. */
  async function killedItself(child: { exitCode: number | null; signalCode: NodeJS.Signals | null } & NodeJS.EventEmitter): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
    expect(child.signalCode).toBe('SIGKILL')
    await new Promise((r) => setTimeout(r, LEASE_MS + 200))
  }

  async function journalled(env: Record<string, string>): Promise<string[]> {
    return readdir(join(env.DATA_DIR!, 'journal', 'writes')).catch(() => [])
  }

  async function json<T>(url: string, body?: object): Promise<T> {
    const r = await fetch(url, body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {})
    expect(r.status, await r.clone().text()).toBe(200)
    return r.json() as Promise<T>
  }

  type Bundle = { recall_bundle: Array<{ id: string; text: string }> }

  /** The document is held exactly as sent: listed with its chunk count, both legs find exactly its chunks. */
  async function holdsWhole(base: string, namespace: string, doc: { id: string; text: string }, token: string): Promise<void> {
    const expected = chunkDocument(doc).map((c) => c.id).sort()
    const list = await json<{ documents: Array<{ id: string; chunks: number }> }>(`${base}/documents?namespace=${namespace}`)
    expect(list.documents.find((d) => d.id === doc.id)?.chunks).toBe(expected.length)
    const lexical = (await json<Bundle>(`${base}/retrieve`, { mode: 'hybrid', namespace, query: token, legs: ['lexical'], top_k: 50 })).recall_bundle
    expect(lexical.map((i) => i.id).filter((id) => id.startsWith(`${doc.id}#`)).sort()).toEqual(expected)
    const vector = (await json<Bundle>(`${base}/retrieve`, { mode: 'hybrid', namespace, query: token, legs: ['vector'], top_k: 50, filter: { doc_ids: [doc.id] } })).recall_bundle
    expect(vector.map((i) => i.id).sort()).toEqual(expected)
  }

  async function holdsNothingOf(base: string, namespace: string, docId: string, token: string): Promise<void> {
    const list = await json<{ documents: Array<{ id: string }> }>(`${base}/documents?namespace=${namespace}`)
    expect(list.documents.map((d) => d.id)).not.toContain(docId)
    const lexical = (await json<Bundle>(`${base}/retrieve`, { mode: 'hybrid', namespace, query: token, legs: ['lexical'], top_k: 50 })).recall_bundle
    expect(lexical.filter((i) => i.id.startsWith(`${docId}#`))).toEqual([])
  }

  const token = () => `zq${randomBytes(3).toString('hex')}`
  const docOf = (id: string, word: string, sections: number) => ({
    id, text: Array.from({ length: sections }, (_, s) => `# 第 ${s + 1} 节\n\n暗号 ${word} 的第 ${s + 1} 段，讲差旅报销与住宿标准。`).join('\n\n')
  })

  /** Sends a write to a service that dies of it: the request fails (the connection closes), and nothing was acknowledged. */
  async function sendToDying(server: ServerProcess, path: string, method: string, body?: object): Promise<void> {
    const answer = await fetch(`${server.url}${path}`, {
      method, ...(body ? { headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) } : {})
    }).then((r) => r.status, () => 'closed')
    expect(answer, 'the process died before it answered').toBe('closed')
  }

  const restDoors: Array<[string, (server: ServerProcess, namespace: string, docs: Array<{ id: string; text: string }>) => Promise<void>]> = [
    ['REST POST /ingest/documents', (server, namespace, docs) => sendToDying(server, '/ingest/documents', 'POST', { namespace, documents: docs })],
    ['the MCP tool ingest', (server, namespace, docs) => sendToDying(server, '/mcp', 'POST', {
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ingest', arguments: { namespace, documents: docs } }
    })],
    ['the CLI over HTTP (--url)', async (server, namespace, docs) => {
      const folder = join(root, `files-${namespace}`)
      await mkdir(folder, { recursive: true })
      for (const doc of docs) await writeFile(join(folder, `${doc.id}.md`), doc.text)
      const r = await cli(['--url', server.url, '--namespace', namespace, folder], {})
      expect(r.code, r.output).not.toBe(0)
    }]
  ]

  for (const [door, send] of restDoors) {
    it(`a new document, and one replacing an older version, through ${door}`, async () => {
      const env = setting(`rest-${restDoors.findIndex(([d]) => d === door)}`)
      const namespace = 'crashdoor'
      const [older, word] = [token(), token()]
      const replaced = docOf('replaced', older, 3)
      // the older version is written and acknowledged first, by a service without the failpoint
      const first = await start(env)
      await json(`${first.url}/ingest/documents`, { namespace, documents: [replaced] })
      await first.kill('SIGTERM')
      // one body: a document the namespace does not hold, and a new version of one it holds
      const dying = await start({ ...env, FAILPOINTS: 'after-journal' })
      await send(dying, namespace, [docOf('fresh', word, 2), docOf('replaced', word, 2)])
      await killedItself(dying.child)
      expect(await journalled(env), 'the write is announced in the journal').toHaveLength(1)
      const restarted = await start(env)
      expect(await journalled(env), 'the restart finished what the journal announced').toEqual([])
      await holdsWhole(restarted.url, namespace, docOf('fresh', word, 2), word)
      await holdsWhole(restarted.url, namespace, docOf('replaced', word, 2), word)
      const oldTail = (await json<Bundle>(`${restarted.url}/retrieve`, { mode: 'hybrid', namespace, query: older, legs: ['lexical'], top_k: 50 })).recall_bundle
      expect(oldTail, 'no chunk of the older version is left').toEqual([])
      await restarted.kill('SIGTERM')
    }, 1_200_000)
  }

  it('the entity names of a graph written through REST POST /ingest/graph (the background entity-names write)', async () => {
    const env: Record<string, string> = { ...setting('entity-names'), ENTITY_VECTORS: 'true', GRAPHRAG_MEANING_FLOOR: '0.5' }
    const namespace = 'crashnames'
    const dying = await start({ ...env, FAILPOINTS: 'after-entity-journal' })
    // the graph is written; the process dies as its names' write is announced, before the answer and before any name is embedded
    await sendToDying(dying, '/ingest/graph', 'POST', {
      namespace, entities: [{ id: 'over', name: '住宿超标', aliases: ['住宿费超标准'] }, { id: 'leave', name: '年假' }], relations: []
    })
    await killedItself(dying.child)
    const entityJournal = () => readdir(join(env['DATA_DIR']!, 'journal', 'entities')).catch(() => [])
    expect(await entityJournal(), 'the names\' write is announced in the journal').toHaveLength(1)
    const restarted = await start(env)
    const deadline = Date.now() + 300_000
    while ((await entityJournal()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500))
    expect(await entityJournal(), 'the restart finished the names\' write').toEqual([])
    const metrics = await (await fetch(`${restarted.url}/metrics`)).text()
    // three distinct texts: 住宿超标, 住宿费超标准, 年假
    expect(metrics).toContain(`recall_entity_names{namespace="${namespace}",state="done"} 3`)
    expect(metrics).toContain(`recall_entity_names{namespace="${namespace}",state="pending"} 0`)
    const found = await json<{ recall_bundle: Array<{ id: string; metadata: { matched_by: string } }> }>(`${restarted.url}/retrieve`, { mode: 'graphrag', namespace, query: '住得比标准贵', top_k: 5 })
    expect(found.recall_bundle.find((i) => i.id === 'over')?.metadata.matched_by).toBe('meaning')
    await restarted.kill('SIGTERM')
  }, 1_200_000)

  it('a document delete through REST DELETE /documents/{id}', async () => {
    const env = setting('delete')
    const namespace = 'crashdoor'
    const word = token()
    const doc = docOf('doomed', word, 2)
    const first = await start(env)
    await json(`${first.url}/ingest/documents`, { namespace, documents: [doc] })
    await first.kill('SIGTERM')
    const dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    await sendToDying(dying, `/documents/doomed?namespace=${namespace}`, 'DELETE')
    await killedItself(dying.child)
    const restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    await holdsNothingOf(restarted.url, namespace, 'doomed', word)
    const vector = (await json<Bundle>(`${restarted.url}/retrieve`, { mode: 'hybrid', namespace, query: word, legs: ['vector'], top_k: 50, filter: { doc_ids: ['doomed'] } })).recall_bundle
    expect(vector).toEqual([])
    await restarted.kill('SIGTERM')
  }, 1_200_000)

  it('a rebuild of the lexical leg through REST POST /documents/{id}/rebuild', async () => {
    const env = setting('rebuild')
    const namespace = 'crashdoor'
    const word = token()
    const doc = docOf('worn', word, 2)
    const first = await start(env)
    await json(`${first.url}/ingest/documents`, { namespace, documents: [doc] })
    await first.kill('SIGTERM')
    const dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    // the lexical leg taken from the document's points behind the running service's back (a start-up backfills points
    // that lack it, so this comes after the start)
    const points = chunkDocument(doc).map((c) => pointIdOf(c.id, namespace))
    const removed = await fetch(`${qdrantUrl}/collections/${env.COLLECTION_PREFIX}chunks/points/payload/delete?wait=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ keys: ['lex_len', 'lex_terms', 'lex_split', 'lex_aref'], points })
    })
    expect(removed.status, await removed.text()).toBe(200)
    type Status = { index_status: Record<string, { state: string }> }
    expect((await json<Status>(`${dying.url}/documents/worn?namespace=${namespace}`)).index_status['lexical']!.state).toBe('pending')
    await sendToDying(dying, '/documents/worn/rebuild', 'POST', { namespace, channels: ['lexical'] })
    await killedItself(dying.child)
    expect(await journalled(env), 'the rebuild is announced in the journal').toHaveLength(1)
    const restarted = await start(env)
    expect(await journalled(env), 'the restart finished it').toEqual([])
    expect((await json<Status>(`${restarted.url}/documents/worn?namespace=${namespace}`)).index_status['lexical']!.state).toBe('done')
    await holdsWhole(restarted.url, namespace, doc, word)
    await restarted.kill('SIGTERM')
  }, 1_200_000)

  it('a document written by the CLI --direct', async () => {
    const env = setting('direct')
    const namespace = 'crashdoor'
    const word = token()
    const doc = docOf('direct', word, 3)
    const folder = join(root, 'direct-files')
    await mkdir(folder, { recursive: true })
    await writeFile(join(folder, 'direct.md'), doc.text)
    const r = await cli(['--direct', '--namespace', namespace, folder], { ...env, FAILPOINTS: 'after-journal' })
    expect(r.signal, r.output).toBe('SIGKILL')
    expect(await journalled(env)).toHaveLength(1)
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200))
    const restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    await holdsWhole(restarted.url, namespace, { id: 'direct', text: doc.text }, word)
    await restarted.kill('SIGTERM')
  }, 1_200_000)

  it('Episodes through REST POST /ingest/episodes, and the demo loader\'s Episodes', async () => {
    const env = setting('episodes')
    const namespace = 'crashdoor'
    const episode = {
      id: 'crash-ep', name: '数据库主从切换演练', summary: '一次数据库主从切换演练的经过。',
      facets: [{ id: 'crash-ep-f', search_text: '主从切换演练的处理经过与结论', points: [{ id: 'crash-ep-p', search_text: '切换用时四分钟' }] }]
    }
    const dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    await sendToDying(dying, '/ingest/episodes', 'POST', { namespace, episodes: [episode] })
    await killedItself(dying.child)
    // the demo loader: its first journalled write (the Episodes) kills the process during start-up
    const demo = join(root, 'demo-data')
    // the imported demo Episodes alone are counted below: none derived from the demo documents beside them
    const demoEnv = { ...env, DATA_DIR: demo, DEMO_DATA: 'true', DERIVED_EPISODES: 'false', COLLECTION_PREFIX: `crashdemo${randomBytes(3).toString('hex')}_` }
    await expect(start({ ...demoEnv, FAILPOINTS: 'after-journal' })).rejects.toThrow(/exited|did not start/)
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200))

    const restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    const found = await json<Bundle>(`${restarted.url}/retrieve`, { mode: 'episodic', namespace, query: '数据库主从切换演练', top_k: 5 })
    expect(found.recall_bundle.map((i) => i.id)).toContain('crash-ep')
    const counts = await json<{ namespaces: Array<{ namespace: string; episodes: number }> }>(`${restarted.url}/namespaces`)
    expect(counts.namespaces.find((n) => n.namespace === namespace)?.episodes).toBe(1)
    await restarted.kill('SIGTERM')

    const demoRestarted = await start(demoEnv)
    const demoEpisodes = (JSON.parse(await readFile('demo/episodes.json', 'utf8')) as { episodes: unknown[] }).episodes.length
    const demoCounts = await json<{ namespaces: Array<{ namespace: string; episodes: number; documents: number }> }>(`${demoRestarted.url}/namespaces`)
    const world = demoCounts.namespaces.find((n) => n.namespace === 'default')
    expect(world?.episodes, 'every demo Episode, finished by the restart').toBe(demoEpisodes)
    expect(world?.documents).toBeGreaterThan(0)
    await demoRestarted.kill('SIGTERM')
  }, 1_200_000)

  it('a conversation through REST POST /ingest/conversations, an appended turn and DELETE /conversations/{id}', async () => {
    const env = setting('conversations')
    const namespace = 'crashconv'
    const session = (turns: Array<{ id: string; speaker: string; text: string }>) =>
      ({ namespace, conversations: [{ id: 'chat', sessions: [{ id: 's1', time: '1:56 pm on 8 May, 2023', turns }] }] })
    const first = [
      { id: 'D1:1', speaker: 'Caroline', text: 'I went to a pottery class yesterday and made a blue bowl.' },
      { id: 'D1:2', speaker: 'Melanie', text: 'Nice! I adopted a grey cat named Oliver last week.' }
    ]
    type Turns = { recall_bundle: Array<{ id: string; metadata: { turns?: Array<{ id: string }> } }> }
    const turnsFound = async (base: string) => (await json<Turns>(`${base}/retrieve`, { mode: 'episodic', namespace, query: 'pottery class bowl', top_k: 5 }))
      .recall_bundle.flatMap((i) => i.metadata.turns ?? []).map((t) => t.id).sort()

    let dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    await sendToDying(dying, '/ingest/conversations', 'POST', session(first))
    await killedItself(dying.child)
    let restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    expect(await turnsFound(restarted.url)).toEqual(['D1:1', 'D1:2'])
    await restarted.kill('SIGTERM')

    dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    await sendToDying(dying, '/ingest/conversations', 'POST', session([{ id: 'D1:3', speaker: 'Caroline', text: 'Oliver the cat sounds lovely.' }]))
    await killedItself(dying.child)
    restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    expect(await turnsFound(restarted.url)).toEqual(['D1:1', 'D1:2', 'D1:3'])
    await restarted.kill('SIGTERM')

    dying = await start({ ...env, FAILPOINTS: 'after-journal' })
    await sendToDying(dying, `/conversations/chat?namespace=${namespace}`, 'DELETE')
    await killedItself(dying.child)
    restarted = await start(env)
    expect(await journalled(env)).toEqual([])
    expect(await turnsFound(restarted.url)).toEqual([])
    await restarted.kill('SIGTERM')
  }, 1_200_000)

  function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], {
        env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe']
      })
      let output = ''
      child.stdout.on('data', (d: Buffer) => { output += d.toString() })
      child.stderr.on('data', (d: Buffer) => { output += d.toString() })
      child.on('close', (code, signal) => resolve({ code, signal, output }))
    })
  }
})
