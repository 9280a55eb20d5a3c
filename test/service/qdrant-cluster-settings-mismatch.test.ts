/**
 * docs/deployment.md: a chunk collection spread otherwise than the service is configured to spread it (here: one
 * copy of each shard, where QDRANT_REPLICATION_FACTOR asks for two) makes the service refuse to start, naming the
 * collection's value, the configured one and the variable. Issue 45: the refusal says how to raise it: on one server
 * that it cannot be; on the run's 3-node cluster the commands, which, run as printed, let the service start.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { QDRANT_CLUSTER_SKIP_LINE, useSharedQdrantCluster } from '../helpers/qdrant-cluster.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'
import { startServer } from '../../scripts/lib/server-process.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`qdrant-cluster-settings-mismatch: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('a chunk collection created with another replication factor', () => {
  const prefix = `clmismatch_${process.pid}_`
  const dirs: string[] = []
  afterAll(async () => {
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(`${prefix}chunks`).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('makes the service refuse to start, naming the collection\'s factor, the configured one and its variable', async () => {
    // created as Qdrant creates a collection when told nothing: one copy of each shard
    await new QdrantClient({ url, checkCompatibility: false }).createCollection(`${prefix}chunks`, { vectors: { size: 512, distance: 'Cosine' } })
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-cluster-mismatch-'))
    dirs.push(dataDir)
    const started = startServer(
      { DATA_DIR: dataDir, DEMO_DATA: 'false', VECTOR_BACKEND: 'qdrant', QDRANT_URL: url, COLLECTION_PREFIX: prefix, QDRANT_REPLICATION_FACTOR: '2' },
      { until: 'readyz', timeoutMs: 120_000 }
    )
    const error = await started.then(async (s) => { await s.kill(); return undefined }, (e: unknown) => e as Error)
    expect(error?.message).toMatch(/server exited with 1/)
    expect(error?.message).toContain('refusing to start')
    expect(error?.message).toContain(`collection ${prefix}chunks was created with replication_factor 1`)
    expect(error?.message).toContain('replication_factor 2 (QDRANT_REPLICATION_FACTOR)')
    expect(error?.message).toContain('To raise it: this Qdrant runs as one server (cluster disabled)')
  }, 180_000)
})

const shared = inject('qdrantCluster')
if (!shared) console.warn(`qdrant-cluster-settings-mismatch on a cluster: ${QDRANT_CLUSTER_SKIP_LINE}`)

describe.skipIf(!shared)('a chunk collection of 3 shards x 1 copy on the run\'s 3-node cluster, where 2 copies are configured', () => {
  const prefix = `clraise_${process.pid}_`
  const dirs: string[] = []
  let cluster: ReturnType<typeof useSharedQdrantCluster>
  afterAll(async () => {
    if (cluster) {
      const client = new QdrantClient({ url: cluster.url, checkCompatibility: false })
      for (const { name } of (await client.getCollections()).collections) {
        if (name.startsWith(prefix)) await client.deleteCollection(name).catch(() => undefined)
      }
      await cluster.close()
    }
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  it('names the commands that raise it; run as printed, they let the service start', async () => {
    cluster = useSharedQdrantCluster(shared!)
    const client = new QdrantClient({ url: cluster.url, checkCompatibility: false })
    await client.createCollection(`${prefix}chunks`, { vectors: { size: 512, distance: 'Cosine' }, shard_number: 3, replication_factor: 1 })
    const env = async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'recall-cluster-raise-'))
      dirs.push(dataDir)
      return {
        DATA_DIR: dataDir, DEMO_DATA: 'false', VECTOR_BACKEND: 'qdrant', QDRANT_URL: cluster.url, COLLECTION_PREFIX: prefix,
        QDRANT_SHARD_NUMBER: '3', QDRANT_REPLICATION_FACTOR: '2', EMBEDDING_SESSIONS: '0', DERIVED_EPISODES: 'false'
      }
    }
    const error = await startServer(await env(), { until: 'readyz', timeoutMs: 120_000 }).then(async (s) => { await s.kill(); return undefined }, (e: unknown) => e as Error)
    expect(error?.message).toMatch(/server exited with 1/)
    expect(error?.message).toContain(`collection ${prefix}chunks was created with replication_factor 1`)
    // the plain line on stderr (the log line before it holds the same text as JSON)
    const refusal = (error?.message ?? '').split('\n').find((line) => line.includes('recall: refusing to start:')) ?? ''
    const commands = /To raise it, run: (.*?); then start recall again/.exec(refusal)?.[1]?.split(' && ') ?? []
    // the setting, then one copy more of each of the 3 shards
    expect(commands).toHaveLength(4)
    expect(commands[0]).toBe(`curl -X PATCH '${cluster.url.replace(/\/$/, '')}/collections/${prefix}chunks' -H 'content-type: application/json' -d '{"params":{"replication_factor":2}}'`)
    for (const command of commands.slice(1)) expect(command).toMatch(/"replicate_shard":\{"shard_id":[012],"from_peer_id":\d+,"to_peer_id":\d+\}/)
    for (const command of commands) {
      const run = spawnSync('sh', ['-c', `${command} --fail --silent --show-error`], { encoding: 'utf8', timeout: 60_000 })
      expect(run.status, `${command}: ${run.stdout}${run.stderr}`).toBe(0)
    }
    // the copies are made by shard transfers: once every shard has two active replicas, the service starts
    const deadline = Date.now() + 120_000
    for (;;) {
      const info = await (await fetch(`${cluster.url.replace(/\/$/, '')}/collections/${prefix}chunks/cluster`)).json() as { result: { local_shards: Array<{ shard_id: number; state: string }>; remote_shards: Array<{ shard_id: number; state: string }> } }
      const active = [...info.result.local_shards, ...info.result.remote_shards].filter((s) => s.state === 'Active')
      if ([0, 1, 2].every((shard) => active.filter((s) => s.shard_id === shard).length === 2)) break
      if (Date.now() > deadline) throw new Error(`the shards were not replicated within 120 s: ${JSON.stringify(info.result)}`)
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const server = await startServer(await env(), { until: 'readyz', timeoutMs: 180_000 })
    await server.kill()
  }, 420_000)
})
