import type {} from 'vitest' // brings the module into scope so the augmentation below merges
import type { TestProject } from 'vitest/node'
import { residentMb, serveNodeControl } from '../helpers/cluster-control.js'
import { redisClusterMissing, startRedisCluster, type SharedRedisCluster } from '../helpers/redis-cluster.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * `redis+cluster://...` of the real Redis Cluster the whole run shares (`REDIS_CLUSTER_TEST_URL`, or 3 masters
     * with one replica each started here); `''` when redis-server or redis-cli is missing, and its suites skip.
     */
    redisClusterUrl: string
    /**
     * The same cluster with its nodes' ports and the endpoint that stops and restarts them (`useSharedRedisCluster`),
     * for the suite that fails a master over; `null` when this run did not start it.
     */
    redisCluster: SharedRedisCluster | null
  }
}

/** Starts one 3-master Redis Cluster (6 redis-server processes) for the whole run, unless `REDIS_CLUSTER_TEST_URL` names one. */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.REDIS_CLUSTER_TEST_URL
  if (given !== undefined && given !== '') {
    project.provide('redisClusterUrl', given)
    project.provide('redisCluster', null)
    return undefined
  }
  const missing = redisClusterMissing()
  if (missing) {
    console.warn(`no Redis Cluster for this run: ${missing}`)
    project.provide('redisClusterUrl', '')
    project.provide('redisCluster', null)
    return undefined
  }
  const started = performance.now()
  const cluster = await startRedisCluster({ masters: 3, replicasEach: 1 })
  const nodeAt = (port: string) => {
    const node = cluster.nodes.find((n) => String(n.port) === port)
    if (!node) throw new Error(`the cluster has no node on port ${port}`)
    return node
  }
  const control = await serveNodeControl({
    stop: (port, signal) => nodeAt(port).stop(signal),
    restart: (port) => nodeAt(port).restart()
  })
  console.log(`redis cluster for this run: 6 nodes ready in ${Math.round(performance.now() - started)} ms, ` +
    `${residentMb(cluster.nodes.map((n) => n.pid))} MB resident`)
  project.provide('redisClusterUrl', cluster.url)
  project.provide('redisCluster', { url: cluster.url, ports: cluster.nodes.map((n) => n.port), masters: cluster.masters, control: control.url })
  return async () => {
    await control.close()
    await cluster.stop()
  }
}
