/**
 * Starts one real Neo4j (scripts/neo4j/server.ts) for the whole test run and provides its Bolt URI as
 * `inject('neo4jUri')`. With `NEO4J_TEST_URI` set, that server is used instead and nothing is started.
 */
import type { TestProject } from 'vitest/node'
import { startNeo4j } from '../../scripts/neo4j/server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    neo4jUri: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.NEO4J_TEST_URI
  if (given) {
    project.provide('neo4jUri', given)
    return async () => {}
  }
  const server = await startNeo4j()
  project.provide('neo4jUri', server.uri)
  return () => server.stop()
}
