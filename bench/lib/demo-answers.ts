/**
 * What the benches that compare answers body for body (`same-answers.ts`, `written-order.ts`) share: the arms each
 * question is asked in, a body without the fields that differ between any two runs, and the service's settings for it
 * (no rate limit, no event-loop refusal, long backend deadlines, derivation on).
 */

/** Every mode and every part of the graph each reads. */
export const ANSWER_ARMS: ReadonlyArray<Record<string, unknown>> = [
  { mode: 'graphrag', structures: 'imported' },
  { mode: 'graphrag', structures: 'derived' },
  { mode: 'graphrag', structures: 'both' },
  { mode: 'hybrid' },
  { mode: 'hybrid', legs: ['vector', 'lexical', 'graph'], structures: 'derived' },
  { mode: 'hybrid', legs: ['vector', 'lexical', 'graph'], structures: 'both' },
  { mode: 'episodic', structures: 'derived' },
  { mode: 'episodic', structures: 'both' }
]

const VOLATILE = new Set(['generation', 'took_ms', 'cached'])

/** A response body as JSON text without `generation`, `took_ms` and `cached`. */
export function stableBody(body: unknown): string {
  return JSON.stringify(body, (key, value: unknown) => (VOLATILE.has(key) ? undefined : value))
}

/** The service's settings for answering on `dataDir` with the models in `modelDir`. */
export function answeringSettings(dataDir: string, modelDir: string, demo: boolean): Record<string, string> {
  return {
    DATA_DIR: dataDir, DEMO_DATA: demo ? 'true' : 'false', LOG_LEVEL: 'silent', MODEL_DIR: modelDir,
    EMBEDDING_SESSIONS: '0', RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true',
    EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0'
  }
}
