/** Codes of a request that failed because its socket was closed under it: undici's socket error, a write into a closed pipe. */
const SOCKET_CLOSED_CODES = new Set(['UND_ERR_SOCKET', 'EPIPE'])

/**
 * Whether a request failed on a socket the server had closed, typically a kept-alive connection the server
 * dropped just as the client reused it (one of {@link SOCKET_CLOSED_CODES} in the cause chain).
 */
export function socketClosed(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; current && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && SOCKET_CLOSED_CODES.has(code)) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}

/**
 * Runs `request`, and once more if it failed on a closed socket; any other failure, and a second one, are thrown.
 * Only for requests that are safe to repeat (reads, upserts and deletes by id or filter): the first may have
 * reached the server before its socket went.
 */
export async function retryOnceOnClosedSocket<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request()
  } catch (error) {
    if (!socketClosed(error)) throw error
    return request()
  }
}
