import { parentPort } from 'node:worker_threads'
import { crossedError, type PortAnswer, type PortCall } from './port-thread.js'

/**
 * The body of a port thread (`PortThread`): answers each call with what `target[method](...args)` resolves to, or the
 * error it throws (`crossedError`). Calls run as they come, as the object's own callers would make them on one thread.
 */
export function servePort(target: object): void {
  const port = parentPort
  if (!port) throw new Error('servePort runs in a worker thread')
  port.on('message', (call: PortCall) => {
    void (async () => {
      let answer: PortAnswer
      try {
        const method = (target as Record<string, unknown>)[call.method]
        if (typeof method !== 'function') throw new TypeError(`no method ${call.method}`)
        answer = { id: call.id, ok: true, value: await (method as (...args: unknown[]) => unknown).apply(target, call.args) }
      } catch (error) {
        answer = { id: call.id, ok: false, error: crossedError(error) }
      }
      try {
        port.postMessage(answer)
      } catch (error) {
        // a value or an error's field that does not clone: the call fails with what can cross
        port.postMessage({ id: call.id, ok: false, error: answer.ok ? crossedError(error) : { ...answer.error, fields: undefined } } satisfies PortAnswer)
      }
    })()
  })
}
