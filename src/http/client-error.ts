/**
 * Answers for requests Node's HTTP parser refuses before fastify sees them (fastify's `clientErrorHandler`),
 * in the service's error shape `{statusCode, code, error, message}` instead of Node's bare "Client Error".
 * The common case is a URL with raw UTF-8 in it (`curl '…?q=咳嗽'`): a request line may carry ASCII only.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import { Errors } from '../errors.js'

interface ClientErrorBody {
  statusCode: number
  code: string
  error: string
  message: string
}

const PERCENT_ENCODE_HINT =
  "percent-encode the query string (curl -G --data-urlencode 'q=…' 'http://HOST/retrieve?mode=hybrid'; encodeURIComponent " +
  'in JavaScript), or send the question in a POST /retrieve JSON body'

/** The answer to a parser error; `code` is Node's (HPE_INVALID_URL and the other llhttp codes, ERR_HTTP_REQUEST_TIMEOUT). */
function clientErrorBody(err: { code?: string; message: string }, maxHeaderBytes: number): ClientErrorBody {
  const error = err.code === 'HPE_INVALID_URL'
    ? new Errors.badRequest(`the URL holds a character a request line may not carry (raw non-ASCII text such as UTF-8, a space or a control character): ${PERCENT_ENCODE_HINT}`)
    : err.code === 'HPE_HEADER_OVERFLOW' ? new Errors.headersTooLarge(maxHeaderBytes)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? new Errors.requestTimeout()
        : new Errors.badRequest(`malformed HTTP request (${err.code ?? 'parse error'}: ${err.message})`)
  const statusCode = error.statusCode ?? 400
  return { statusCode, code: error.code, error: STATUS_CODES[statusCode]!, message: error.message }
}

/** fastify's `clientErrorHandler`: write the JSON answer if the socket can still take it, then close it. */
export function clientErrorHandler(maxHeaderBytes: number): (err: Error & { code?: string }, socket: Socket) => void {
  return (err, socket) => {
    // A reset connection has no one to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    if (socket.writable) {
      const body = clientErrorBody(err, maxHeaderBytes)
      const json = JSON.stringify(body)
      socket.write(`HTTP/1.1 ${body.statusCode} ${body.error}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`)
    }
    socket.destroy(err)
  }
}
