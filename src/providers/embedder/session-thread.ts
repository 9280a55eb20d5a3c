/**
 * The entry of one worker thread of the embedding pool (./session-thread-client.ts): it loads one ONNX session from
 * the options in its `workerData`, says `ready` (or `failed`), then answers each run posted to it, one at a time.
 * onnxruntime-node 1.26 (1.22 and 1.31 too) keeps sessions of several threads apart; 1.21 aborted the process
 * (bench/results/concurrency.log.md, "The embedding pool and why threads").
 */
import { parentPort, workerData } from 'node:worker_threads'
import { loadOnnxSession, OnnxSessionError, type OnnxSessionOptions } from './onnx-session.js'
import type { SessionReply, SessionRequest } from './session-protocol.js'

const port = parentPort
if (port === null) throw new Error('session-thread.ts runs as a worker thread only')

const failure = (error: unknown): { kind: 'missing' | 'load' | 'run'; message: string } =>
  error instanceof OnnxSessionError ? { kind: error.kind, message: error.message } : { kind: 'run', message: error instanceof Error ? error.message : String(error) }

try {
  const session = await loadOnnxSession(workerData as OnnxSessionOptions)
  port.on('message', (request: SessionRequest | 'close') => {
    if (request === 'close') {
      void session.dispose().finally(() => port.close())
      return
    }
    session.run(request.texts).then(
      // The vectors' buffers move to the pool's thread instead of being copied.
      (vectors) => port.postMessage({ kind: 'done', id: request.id, vectors } satisfies SessionReply, vectors.map((v) => v.buffer as ArrayBuffer)),
      (error: unknown) => port.postMessage({ kind: 'error', id: request.id, error: failure(error) } satisfies SessionReply)
    )
  })
  port.postMessage({ kind: 'ready' } satisfies SessionReply)
} catch (error) {
  port.postMessage({ kind: 'failed', error: failure(error) } satisfies SessionReply)
  port.close()
}
