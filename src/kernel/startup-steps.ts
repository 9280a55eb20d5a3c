/**
 * The name of every start-up step (registered in src/service-startup.ts): routes and modes
 * wait for steps by name, so a name outside this list is a compile error rather than a gate that never holds.
 * A step may be absent from a run (the demo world when `DEMO_DATA` is off, the journal on the embedded stores):
 * waiting for it then waits for nothing.
 */
const STARTUP_STEPS = [
  'sole-writer', 'redis:replicas', 'embedder', 'documents', 'episodes:journal', 'knowledge-graph', 'entity-names', 'graphrag:names',
  'episodic:stores', 'demo:graph', 'demo:episodes', 'demo:documents'
] as const

export type StartupStep = typeof STARTUP_STEPS[number]

/** The steps every write waits for, besides those of what it writes: Redis able to confirm it (`REDIS_WAIT_REPLICAS`). */
export const WRITE_STEPS: readonly StartupStep[] = ['redis:replicas']
