/**
 * The errors a provider may throw. Adapters and routes see only these; each provider maps its
 * backend's own failures onto them once, at the port edge.
 */
export class ProviderError extends Error {
  constructor(
    readonly backend: string,
    message: string,
    options?: { cause?: unknown }
  ) {
    super(message, options)
    this.name = new.target.name
  }
}

/** The backend cannot be reached (connection refused, DNS, closed pool). */
export class BackendUnavailableError extends ProviderError {}

/** The backend did not answer within the configured time. */
export class BackendTimeoutError extends ProviderError {}

/** The backend answered something the provider cannot use (bad status, malformed body). */
export class UnexpectedResponseError extends ProviderError {}

/** What a backend does for the service; the first half of its name. */
export type BackendRole = 'embedder' | 'vector-store' | 'lexical-index' | 'knowledge-graph' | 'episodic-graph' | 'cache'

/**
 * A backend's name, `role:kind` (`vector-store:qdrant`, `cache:memory`): the one name a backend has in
 * `/readyz`, in `recall_backend_errors_total{backend}` and in error messages and leg reasons.
 */
export function backendName(role: BackendRole, kind: string): string {
  return `${role}:${kind}`
}

/** Health of one backend, as reported by `health()` on every port. */
export interface BackendHealth {
  backend: string
  ok: boolean
  latency_ms: number
  detail?: string
}

/**
 * Times `probe` as one backend's health check: ok, with the detail the probe returns, when it
 * resolves; not ok, with the error's message as detail, when it throws.
 */
export async function probeHealth(backend: string, probe: () => Promise<string | undefined | void>): Promise<BackendHealth> {
  const started = performance.now()
  try {
    const detail = await probe()
    return { backend, ok: true, latency_ms: performance.now() - started, ...(detail ? { detail } : {}) }
  } catch (error) {
    return { backend, ok: false, latency_ms: performance.now() - started, detail: errorMessage(error) }
  }
}

/** An error's message, or the thrown value as text when it is not an Error. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * The provider error for a backend call cancelled through its AbortSignal: the signal's own reason when it
 * is a provider error (a leg's deadline names its backend), else a timeout naming `backend`.
 */
export function abortError(signal: AbortSignal, backend: string): ProviderError {
  return signal.reason instanceof ProviderError ? signal.reason : new BackendTimeoutError(backend, 'the request was cancelled')
}
