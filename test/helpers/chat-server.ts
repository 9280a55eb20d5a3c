import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the server received: its path, headers and JSON body. */
export interface ChatRequest {
  path: string
  headers: IncomingHttpHeaders
  body: { model: string; messages: Array<{ role: string; content: string }>; temperature?: number; response_format?: Record<string, unknown> }
}

/** What to answer: a status, headers, a body (an object is sent as JSON, a string as is), after `delayMs`. */
export interface ChatReply {
  status?: number
  headers?: Record<string, string>
  body?: unknown
  delayMs?: number
}

/** A chat completion as OpenAI documents it: one choice with the assistant's `content`, and `usage`. */
export function completion(content: string, usage = { prompt_tokens: 100, completion_tokens: 20 }): unknown {
  return {
    id: 'chatcmpl-test', object: 'chat.completion', created: 1_764_633_600, model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
  }
}

/**
 * A small OpenAI-compatible chat server on 127.0.0.1 (node:http): `reply(request, nth)` says what to answer, `nth`
 * counting from 0 the requests whose user message was the same before this one. It records every request and the
 * most requests it had in flight at once.
 */
export async function startChatServer(reply: (request: ChatRequest, nth: number) => ChatReply) {
  const requests: ChatRequest[] = []
  const seen = new Map<string, number>()
  let inFlight = 0
  let maxInFlight = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const request: ChatRequest = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'] }
      requests.push(request)
      const user = request.body.messages.find((m) => m.role === 'user')?.content ?? ''
      const nth = seen.get(user) ?? 0
      seen.set(user, nth + 1)
      const answer = reply(request, nth)
      inFlight += 1
      maxInFlight = Math.max(maxInFlight, inFlight)
      // in flight until answered or dropped by the client (a timed-out call)
      let done = false
      const finish = () => {
        if (!done) inFlight -= 1
        done = true
      }
      res.on('close', finish)
      const send = () => {
        finish()
        if (res.destroyed) return
        const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {})
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
        res.end(body)
      }
      if (answer.delayMs) setTimeout(send, answer.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight
    },
    /** Forgets the requests and the in-flight high-water mark. */
    reset() {
      requests.length = 0
      seen.clear()
      maxInFlight = inFlight
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
