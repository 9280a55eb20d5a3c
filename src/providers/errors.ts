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

/** Health of one backend, as reported by `health()` on every port. */
export interface BackendHealth {
  backend: string
  ok: boolean
  latency_ms: number
  detail?: string
}
