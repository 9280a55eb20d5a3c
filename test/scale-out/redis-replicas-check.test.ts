/**
 * Issue 45: `REDIS_WAIT_REPLICAS` is compared with what the deployment can confirm at start-up, not at the first write.
 * A real Redis Cluster of three masters and no replicas (what `redis-cli --cluster create` makes without
 * `--cluster-replicas`) keeps the service from becoming ready: `/readyz` answers 503 naming both numbers and the two
 * fixes, and a write answers 503 saying the same without writing anything. Each fix works: `REDIS_WAIT_REPLICAS=0`
 * over the same cluster is ready and writes answer with their generation; running the `redis-cli --cluster add-node`
 * commands the message names makes the waiting service ready, and a replica lost afterwards makes `/readyz` say so
 * again. One redis-server: unset, nothing is checked (as before); asked for a replica it has not, refused. Sentinel:
 * its master's replicas are counted.
 */
import { spawnSync } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { redisClusterMissing, startLoneClusterNode, startRedisCluster, type RedisClusterServer } from '../helpers/redis-cluster.js'
import { startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.js'

const missing = redisClusterMissing()
if (missing) console.warn(`REDIS_WAIT_REPLICAS checked at start-up: ${missing}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Readiness {
  ready: boolean
  backends: Array<{ backend: string; ok: boolean; detail?: string }>
  startup: { steps: Array<{ name: string; state: string; detail: string; attempts: number }> }
}

async function readiness(t: TestApp): Promise<{ status: number; body: Readiness }> {
  const r = await t.app.inject({ method: 'GET', url: '/readyz' })
  return { status: r.statusCode, body: r.json() as Readiness }
}

const doc = (id: string) => ({ id, text: `# ${id}\n\n值班说明：夜间告警由二线值班处理。` })
const ingest = (t: TestApp, id: string) => t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'rc45', documents: [doc(id)] } })

describe.skipIf(missing !== undefined)('REDIS_WAIT_REPLICAS against a Redis Cluster of 3 masters without replicas', () => {
  let cluster: RedisClusterServer
  const apps: TestApp[] = []
  const added: Array<{ port: number; stop(): Promise<void> }> = []
  let waiting: TestApp
  const env = () => ({ REDIS_URL: cluster.url, REDIS_COMMAND_TIMEOUT_MS: '1000' })

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasEach: 0 })
  }, 120_000)
  afterAll(async () => {
    for (const t of apps) await t.close()
    for (const n of added) await n.stop()
    await cluster?.stop()
  })

  it('is refused at start-up: /readyz 503 naming both numbers and the two fixes; a write 503 saying the same, nothing written', async () => {
    waiting = await buildTestApp(env())
    apps.push(waiting)
    // The step's first check runs after the app is ready; on a busy machine it may not have ended at the first look,
    // and a later look may fall on a retry running again (which still says why the last attempt failed).
    const deadline = Date.now() + 60_000
    let first = await readiness(waiting)
    const failedOnce = (r: typeof first) => r.body.startup.steps.find((s) => s.name === 'redis:replicas')?.detail.includes('the deployment can confirm') === true
    while (!failedOnce(first) && Date.now() < deadline) {
      await sleep(200)
      first = await readiness(waiting)
    }
    const { status, body } = first
    expect(status).toBe(503)
    expect(body.ready).toBe(false)
    const step = body.startup.steps.find((s) => s.name === 'redis:replicas')
    expect(['retrying', 'running']).toContain(step?.state)
    for (const part of [
      'REDIS_WAIT_REPLICAS=1 asks 1 replica(s) of a master to confirm every write lock and generation record',
      'the deployment can confirm 0', '3 of the cluster\'s 3 masters have fewer', 'add replicas, 1 per master',
      'redis-cli --cluster add-node <new-host:port> 127.0.0.1:', '--cluster-slave --cluster-master-id ', 'set REDIS_WAIT_REPLICAS=0 and accept the weaker promise'
    ]) expect(step?.detail).toContain(part)
    expect(step?.detail.match(/--cluster add-node/g)).toHaveLength(3)
    const entry = body.backends.find((b) => b.backend === 'write-confirmation:redis')
    expect(entry?.ok).toBe(false)
    expect(entry?.detail).toContain('the deployment can confirm 0')

    const write = await ingest(waiting, 'refused-1')
    expect(write.statusCode).toBe(503)
    expect(write.json().code).toBe('RECALL_STARTING')
    expect(write.json().message).toContain('redis:replicas')
    expect(write.json().message).toContain('REDIS_WAIT_REPLICAS=1')
    const listed = await waiting.app.inject({ method: 'GET', url: '/documents?namespace=rc45' })
    expect(listed.statusCode, listed.body).toBe(200)
    expect(listed.json().documents).toEqual([])
    // no write was recorded on the cluster either (the read above made the namespace's hash: its epoch, no write)
    const masterPort = (await cluster.masterOf('recall:generations:{rc45}')).port
    const raw = new Redis({ port: masterPort, host: '127.0.0.1' })
    expect(await raw.hget('recall:generations:{rc45}', 'hybrid')).toBeNull()
    expect(await raw.exists('recall:generations:{rc45}:changes')).toBe(0)
    raw.disconnect()
  }, 180_000)

  it('with REDIS_WAIT_REPLICAS=0 (the weaker promise) the same cluster is ready and a write answers with its generation', async () => {
    const t = await buildTestApp({ ...env(), REDIS_WAIT_REPLICAS: '0' })
    apps.push(t)
    const { status, body } = await readiness(t)
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.startup.steps.map((s) => s.name)).not.toContain('redis:replicas')
    const write = await ingest(t, 'weaker-1')
    expect(write.statusCode, write.body).toBe(200)
    expect(write.json().generation).toBeGreaterThan(0)
  }, 180_000)

  it('running the add-node commands the message names makes the waiting service ready; a replica lost makes /readyz say so again', async () => {
    const detail = (await readiness(waiting)).body.startup.steps.find((s) => s.name === 'redis:replicas')!.detail
    const commands = [...detail.matchAll(/redis-cli (--cluster add-node <new-host:port> \S+ --cluster-slave --cluster-master-id \w+)/g)].map((m) => m[1]!)
    expect(commands).toHaveLength(3)
    for (const command of commands) {
      const node = await startLoneClusterNode()
      added.push(node)
      const run = spawnSync('redis-cli', command.replace('<new-host:port>', `127.0.0.1:${node.port}`).split(' '), { encoding: 'utf8', timeout: 60_000 })
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
    }
    // the step tries again on its own (backoff doubling from 1 s, at most 30 s)
    const deadline = Date.now() + 120_000
    let state = await readiness(waiting)
    while (state.status !== 200 && Date.now() < deadline) {
      await sleep(500)
      state = await readiness(waiting)
    }
    expect(state.status, JSON.stringify(state.body.startup.steps.find((s) => s.name === 'redis:replicas'))).toBe(200)
    expect(state.body.startup.steps.find((s) => s.name === 'redis:replicas')?.detail).toContain('REDIS_WAIT_REPLICAS=1 is met: 3 masters, the fewest replicas 1')
    const write = await ingest(waiting, 'after-fix-1')
    expect(write.statusCode, write.body).toBe(200)
    expect(write.json().generation).toBeGreaterThan(0)

    // a topology change afterwards: one replica gone, its master cannot confirm a write, and /readyz says so
    await added[0]!.stop()
    const lost = Date.now() + 30_000
    let after = await readiness(waiting)
    while (after.status === 200 && Date.now() < lost) {
      await sleep(200)
      after = await readiness(waiting)
    }
    expect(after.status).toBe(503)
    const entry = after.body.backends.find((b) => b.backend === 'write-confirmation:redis')
    expect(entry?.ok).toBe(false)
    expect(entry?.detail).toContain('the deployment can confirm 0: 1 of the cluster\'s 3 masters has fewer')
  }, 300_000)
})

describe('REDIS_WAIT_REPLICAS on one redis-server (the run\'s, which has no replica)', () => {
  const apps: TestApp[] = []
  afterAll(async () => { for (const t of apps) await t.close() })

  it('unset: nothing is checked and nothing changes', async () => {
    const t = await buildTestApp({ REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '1000' })
    apps.push(t)
    const { status, body } = await readiness(t)
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.startup.steps.map((s) => s.name)).not.toContain('redis:replicas')
    expect(body.backends.map((b) => b.backend)).not.toContain('write-confirmation:redis')
  }, 120_000)

  it('asked for one replica: refused, naming REPLICAOF as the way to add one', async () => {
    const t = await buildTestApp({ REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '1000', REDIS_WAIT_REPLICAS: '1' })
    apps.push(t)
    const { status, body } = await readiness(t)
    expect(status).toBe(503)
    const detail = body.startup.steps.find((s) => s.name === 'redis:replicas')?.detail
    const port = new URL(inject('redisUrl')).port
    expect(detail).toContain(`the deployment can confirm 0: the master 127.0.0.1:${port} has 0 online replica(s)`)
    expect(detail).toContain(`redis-cli -h <new-host> -p <port> REPLICAOF 127.0.0.1 ${port}`)
  }, 120_000)
})

describe.skipIf(missing !== undefined)('REDIS_WAIT_REPLICAS under Sentinel (a master with one replica)', () => {
  let set: SentinelSet
  const apps: TestApp[] = []
  beforeAll(async () => { set = await startSentinelSet({ replicas: 1 }) }, 120_000)
  afterAll(async () => {
    for (const t of apps) await t.close()
    await set?.stop()
  })

  it('counts the master\'s connected replica: 1 is met, 2 is refused naming both numbers', async () => {
    const met = await buildTestApp({ REDIS_URL: set.url, REDIS_COMMAND_TIMEOUT_MS: '1000' })
    apps.push(met)
    // the Sentinel set's replica may still be syncing (not yet online) as the service starts: the step retries until it is
    let ok = await readiness(met)
    for (const deadline = Date.now() + 30_000; ok.status !== 200 && Date.now() < deadline; ok = await readiness(met)) {
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
    expect(ok.body.startup.steps.find((s) => s.name === 'redis:replicas')?.detail).toContain('REDIS_WAIT_REPLICAS=1 is met')
    const two = await buildTestApp({ REDIS_URL: set.url, REDIS_COMMAND_TIMEOUT_MS: '1000', REDIS_WAIT_REPLICAS: '2' })
    apps.push(two)
    const refused = await readiness(two)
    expect(refused.status).toBe(503)
    const detail = refused.body.startup.steps.find((s) => s.name === 'redis:replicas')?.detail
    expect(detail).toContain('REDIS_WAIT_REPLICAS=2 asks 2 replica(s)')
    expect(detail).toContain(`the deployment can confirm 1: the master 127.0.0.1:${await set.masterPort()} has 1 online replica(s)`)
    expect(detail).toContain('(the Sentinels find it there)')
    expect(detail).toContain('set REDIS_WAIT_REPLICAS=1 and accept the weaker promise')
  }, 180_000)
})
