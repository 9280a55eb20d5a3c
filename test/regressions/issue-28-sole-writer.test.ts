/**
 * Issue 28, item 4: two processes over one Qdrant (and Redis), both left at `REPLICAS=1`, each took itself for
 * the only writer and never read the other's writes. Now the second one refuses to start, naming the first
 * (host, pid, start time) and the fix; the first keeps serving; and once the first is killed without closing,
 * its registration ends with its lease and a new process starts.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { QdrantClient } from '@qdrant/js-client-rest'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { QdrantSoleWriterRegistry, RedisSoleWriterRegistry, thisProcess, type SoleWriterRegistry } from '../../src/corpus/sole-writer/index.js'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`issue-28-sole-writer: ${QDRANT_SKIP_LINE}`)

const LEASE_MS = 3_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const dirs: string[] = []
const servers: ServerProcess[] = []
const redis = new Redis(inject('redisUrl'))
afterAll(async () => {
  for (const s of servers) await s.kill('SIGKILL')
  for (const d of dirs) await rm(d, { recursive: true, force: true })
  await redis.quit()
})

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-issue28-'))
  dirs.push(dataDir)
  const server = await startServer({ ...env, DATA_DIR: dataDir, DEMO_DATA: 'false' }, { timeoutMs: 120_000 })
  servers.push(server)
  return server
}

/** `npm run ingest -- --direct` of one document with `env`: its exit code and everything it printed. */
async function ingestDirect(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-issue28-cli-'))
  dirs.push(dataDir)
  await writeFile(join(dataDir, 'note.md'), '---\nid: cli-note\n---\n# 备忘\n\n命令行写入的段落。')
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', '--direct', join(dataDir, 'note.md')], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env, DATA_DIR: dataDir, DEMO_DATA: 'false' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (d: Buffer) => { output += d.toString() })
  child.stderr.on('data', (d: Buffer) => { output += d.toString() })
  const [code] = (await once(child, 'close')) as [number | null]
  return { code, output }
}

/** The start of a process expected to refuse: its exit message (the start must fail). */
async function refusal(env: Record<string, string>): Promise<string> {
  const outcome = await start(env).then((s) => s, (error: unknown) => error as Error)
  if (!(outcome instanceof Error)) throw new Error(`the second process started: ${outcome.output().slice(-2000)}`)
  return outcome.message
}

const registries: Array<{ name: string; env: () => Record<string, string>; probe: (prefix: string) => SoleWriterRegistry }> = [
  {
    name: 'in Redis (REDIS_URL set)',
    env: () => ({ REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '1000' }),
    probe: (prefix) => new RedisSoleWriterRegistry({ client: redis, key: `recall:sole-writer:${prefix}` })
  },
  {
    name: 'in Qdrant (no Redis)',
    env: () => ({}),
    probe: (prefix) => new QdrantSoleWriterRegistry({ url: qdrantUrl, collection: `${prefix}writers`, timeoutMs: 10_000, settleMs: 100 })
  }
]

describe.skipIf(!qdrantUrl).each(registries)('two processes over the same stores with REPLICAS=1, registered $name', ({ env, probe }) => {
  const prefix = `issue28_${randomBytes(3).toString('hex')}_`
  afterAll(async () => {
    const client = new QdrantClient({ url: qdrantUrl, checkCompatibility: false })
    for (const c of ['chunks', 'writers']) await client.deleteCollection(`${prefix}${c}`).catch(() => undefined)
  })
  const stores = () => ({
    VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, LEXICAL_BACKEND: 'qdrant', COLLECTION_PREFIX: prefix,
    REPLICAS: '1', SOLE_WRITER_LEASE_MS: String(LEASE_MS), ...env()
  })

  it('refuses the second, naming the first and the fix; the first serves on; after the first is killed, a new one starts once its lease ran out', async () => {
    const a = await start(stores())
    const message = await refusal(stores())
    expect(message).toMatch(/server exited with 1/)
    expect(message).toContain('refusing to start')
    expect(message).toContain(`host ${hostname()}, pid ${a.child.pid}, started at `)
    expect(message).toContain('set REPLICAS to more than 1 and the same REDIS_URL on every one')
    // so does a direct ingest, a process of its own over the same stores
    const cli = await ingestDirect(stores())
    expect(cli.code, cli.output).toBe(1)
    expect(cli.output).toContain(`ingest failed: sole-writer: another recall process is registered as the only writer`)
    expect(cli.output).toContain(`pid ${a.child.pid}`)

    // A writes and reads on, its catalog its own as before
    const ingest = await fetch(`${a.url}/ingest/documents`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ documents: [{ id: 'oncall', text: '# 值班\n\n编号 tagissue28 的夜间告警由二线值班处理。' }] })
    })
    expect(ingest.status, await ingest.clone().text()).toBe(200)
    const found = await fetch(`${a.url}/retrieve?mode=hybrid&q=tagissue28`)
    expect((await found.json() as { recall_bundle: { id: string }[] }).recall_bundle.map((i) => i.id)).toEqual(['oncall#0'])

    // Killed without closing: its registration outlives it, until its lease ends
    await a.kill('SIGKILL')
    const killedAt = performance.now()
    const held = await probe(prefix).claim(thisProcess(), LEASE_MS)
    expect(held).toMatchObject({ held: false, holder: { pid: a.child.pid, host: hostname() } })
    const endsInMs = (held as { endsInMs: number }).endsInMs
    expect(endsInMs).toBeLessThanOrEqual(LEASE_MS)
    await sleep(Math.max(0, killedAt + endsInMs + 300 - performance.now()))

    const b = await start(stores())
    const ready = await (await fetch(`${b.url}/readyz`)).json() as { startup: { steps: { name: string; state: string; detail: string }[] } }
    expect(ready.startup.steps.find((s) => s.name === 'sole-writer')).toMatchObject({ state: 'done', detail: expect.stringContaining('registered as the only writer') })
    const again = await fetch(`${b.url}/retrieve?mode=hybrid&q=tagissue28`)
    expect((await again.json() as { recall_bundle: { id: string }[] }).recall_bundle.map((i) => i.id)).toEqual(['oncall#0'])

    // Closed (SIGTERM): its registration ends at once
    await b.kill('SIGTERM')
    expect(await probe(prefix).claim(thisProcess(), LEASE_MS)).toEqual({ held: true })
  }, 300_000)
})
