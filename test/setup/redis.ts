import type {} from 'vitest' // brings the module into scope so the augmentation below merges
import type { TestProject } from 'vitest/node'
import { startRedis } from '../helpers/redis-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the real Redis the whole run shares (`REDIS_TEST_URL`, or a server started here). */
    redisUrl: string
  }
}

/** Starts one redis-server for the whole test run, unless `REDIS_TEST_URL` names one already. */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.REDIS_TEST_URL
  if (given !== undefined && given !== '') {
    project.provide('redisUrl', given)
    return undefined
  }
  const server = await startRedis()
  project.provide('redisUrl', server.url)
  return async () => {
    await server.stop()
  }
}
