import type {} from 'vitest' // brings the module into scope so the augmentation below merges
import type { TestProject } from 'vitest/node'
import { redisClusterMissing, startRedisCluster } from '../helpers/redis-cluster.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * `redis+cluster://...` of the real Redis Cluster the whole run shares (`REDIS_CLUSTER_TEST_URL`, or 3 masters
     * with one replica each started here); `''` when redis-server or redis-cli is missing, and its suites skip.
     */
    redisClusterUrl: string
  }
}

/** Starts one 3-master Redis Cluster (6 redis-server processes) for the whole run, unless `REDIS_CLUSTER_TEST_URL` names one. */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.REDIS_CLUSTER_TEST_URL
  if (given !== undefined && given !== '') {
    project.provide('redisClusterUrl', given)
    return undefined
  }
  const missing = redisClusterMissing()
  if (missing) {
    console.warn(`no Redis Cluster for this run: ${missing}`)
    project.provide('redisClusterUrl', '')
    return undefined
  }
  const cluster = await startRedisCluster({ masters: 3, replicasEach: 1 })
  project.provide('redisClusterUrl', cluster.url)
  return async () => {
    await cluster.stop()
  }
}
