import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'

/** Sends raw bytes (no client library percent-encodes them) and reads the whole answer until the server closes or 5 s pass. */
function rawRequest(port: number, bytes: Buffer): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes))
    const chunks: Buffer[] = []
    const timer = setTimeout(() => socket.destroy(), 5000)
    socket.on('data', (c) => {
      chunks.push(c)
      // A keep-alive answer (the control request) does not close: stop once its body is in.
      const text = Buffer.concat(chunks).toString('utf8')
      const length = /content-length: (\d+)/i.exec(text)?.[1]
      const split = text.indexOf('\r\n\r\n')
      if (length && split >= 0 && Buffer.byteLength(text.slice(split + 4)) >= Number(length)) socket.destroy()
    })
    socket.on('error', reject)
    socket.on('close', () => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n')
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, body: text.slice(split + 4) })
    })
  })
}

describe('requests Node\'s HTTP parser refuses get the service\'s error shape', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    t = await buildTestApp()
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    port = (t.app.server.address() as { port: number }).port
  })
  afterAll(async () => t?.close())

  it('a well-formed request over the same raw socket is answered normally (the control)', async () => {
    const r = await rawRequest(port, Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'))
    expect(r.status).toBe(200)
  })

  it('a raw UTF-8 question in the URL is a JSON 400 that says to percent-encode it', async () => {
    const r = await rawRequest(port, Buffer.from('GET /retrieve?mode=hybrid&q=咳嗽 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'utf8'))
    expect(r.status).toBe(400)
    expect(r.headers['content-type']).toMatch(/^application\/json/)
    const body = JSON.parse(r.body) as Record<string, unknown>
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode'])
    expect(body).toMatchObject({ statusCode: 400, code: 'RECALL_BAD_REQUEST', error: 'Bad Request' })
    expect(body.message).toContain('percent-encode the query string')
    expect(body.message).toContain("curl -G --data-urlencode 'q=")
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.body))
  })

  it('request headers over the 64 KiB limit are a JSON 431 naming the limit', async () => {
    const big = 'x'.repeat(70 * 1024)
    const r = await rawRequest(port, Buffer.from(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${big}\r\n\r\n`))
    expect(r.status).toBe(431)
    expect(JSON.parse(r.body)).toMatchObject({ statusCode: 431, code: 'RECALL_HEADERS_TOO_LARGE', error: 'Request Header Fields Too Large' })
    expect((JSON.parse(r.body) as { message: string }).message).toContain(String(64 * 1024))
  })

  it('other malformed requests are a JSON 400 naming the parser\'s complaint', async () => {
    const r = await rawRequest(port, Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Name: 1\r\n\r\n'))
    expect(r.status).toBe(400)
    const body = JSON.parse(r.body) as { code: string; message: string }
    expect(body.code).toBe('RECALL_BAD_REQUEST')
    expect(body.message).toMatch(/^malformed HTTP request \(HPE_/)
  })
})
