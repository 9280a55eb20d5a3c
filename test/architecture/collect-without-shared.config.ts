import { defineConfig } from 'vitest/config'

/**
 * Collects every test file (`vitest list`) as a clone with no `../shared` would: no global setup, so no backend is
 * started, and the values the setup modules provide set as they are when the shared folder is missing (no Qdrant, no
 * Redis Cluster). Redis and Neo4j are there in such a clone (`make setup` installs them), so they get addresses that
 * answer nothing: collection must not connect to anything. One module graph for every file keeps this to seconds.
 */
export default defineConfig({
  test: {
    // COLLECT_FIXTURE: the check's own fixture instead (test/fixtures/collect-without-shared/), to see it fail
    include: [process.env.COLLECT_FIXTURE ? 'test/fixtures/collect-without-shared/*.fixture.ts' : 'test/**/*.test.ts'],
    globalSetup: [],
    pool: 'threads',
    isolate: false,
    provide: {
      qdrantUrl: '',
      qdrantCluster: null,
      redisClusterUrl: '',
      redisCluster: null,
      redisUrl: 'redis://127.0.0.1:1',
      neo4jUri: 'bolt://127.0.0.1:1'
    }
  }
})
