import { describe, expect, it } from 'vitest'
import { retryOnceOnClosedSocket, socketClosed } from '../../src/providers/vector-store/socket-retry.js'

// The failure shapes as Node's fetch reports them: a TypeError whose cause carries the socket's code.
const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) })
const mapped = (inner: Error) => new Error('qdrant is unreachable', { cause: inner })

describe('socketClosed', () => {
  it('is true for a socket closed under the request (undici UND_ERR_SOCKET, a write into a closed pipe), however deep', () => {
    expect(socketClosed(fetchFailed('UND_ERR_SOCKET'))).toBe(true)
    expect(socketClosed(mapped(fetchFailed('EPIPE')))).toBe(true)
  })
  it('is false for a server that is not there, a timeout, an answer, or no error', () => {
    for (const code of ['ECONNREFUSED', 'UND_ERR_HEADERS_TIMEOUT', 'ETIMEDOUT']) expect(socketClosed(fetchFailed(code)), code).toBe(false)
    expect(socketClosed(Object.assign(new Error('qdrant answered 500'), { status: 500 }))).toBe(false)
    expect(socketClosed(undefined)).toBe(false)
  })
})

describe('retryOnceOnClosedSocket', () => {
  it('sends a request whose socket was closed once more, and no more than once', async () => {
    let calls = 0
    expect(await retryOnceOnClosedSocket(async () => { if (++calls === 1) throw fetchFailed('UND_ERR_SOCKET'); return 'ok' })).toBe('ok')
    expect(calls).toBe(2)
    calls = 0
    await expect(retryOnceOnClosedSocket(async () => { calls++; throw fetchFailed('EPIPE') })).rejects.toThrow('fetch failed')
    expect(calls).toBe(2)
  })
  it('does not repeat any other failure', async () => {
    let calls = 0
    await expect(retryOnceOnClosedSocket(async () => { calls++; throw fetchFailed('ECONNREFUSED') })).rejects.toThrow('fetch failed')
    expect(calls).toBe(1)
  })
})
