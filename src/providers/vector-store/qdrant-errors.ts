import { BackendTimeoutError, BackendUnavailableError, backendName, ProviderError, UnexpectedResponseError } from '../errors.js'

export const BACKEND = backendName('vector-store', 'qdrant')

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET'])
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** Qdrant client and fetch failures as provider errors: unreachable, timed out, or an answer we cannot use. */
export function mapError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error
  const name = error instanceof Error ? error.name : ''
  if (name === 'QdrantClientTimeoutError' || name === 'AbortError' || name === 'TimeoutError') {
    return new BackendTimeoutError(BACKEND, 'qdrant did not answer in time', { cause: error })
  }
  const status = (error as { status?: unknown } | null)?.status
  if (typeof status === 'number') {
    const data = (error as { data?: unknown }).data
    const detail = (data as { status?: { error?: unknown } } | undefined)?.status?.error
    return new UnexpectedResponseError(BACKEND, `qdrant answered ${status}${detail ? `: ${String(detail)}` : ''}`, {
      cause: error
    })
  }
  const code = causeCode(error)
  if (code && TIMEOUT_CODES.has(code)) return new BackendTimeoutError(BACKEND, `qdrant did not answer in time (${code})`, { cause: error })
  if (code && UNREACHABLE_CODES.has(code)) return new BackendUnavailableError(BACKEND, `qdrant is unreachable (${code})`, { cause: error })
  if (error instanceof TypeError && error.message === 'fetch failed') {
    return new BackendUnavailableError(BACKEND, 'qdrant is unreachable', { cause: error })
  }
  return new UnexpectedResponseError(BACKEND, `qdrant call failed: ${String(error)}`, { cause: error })
}

/** The errno-style code of `error` or of the first error in its cause chain that has one. */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    const inner = (current as { errors?: unknown[] }).errors
    if (Array.isArray(inner)) {
      for (const e of inner) {
        const c = (e as { code?: unknown }).code
        if (typeof c === 'string') return c
      }
    }
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}
