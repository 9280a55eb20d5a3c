/**
 * The entry of one session process of the embedding pool with `EMBEDDING_POOL=processes` (started by
 * ./session-process-client.ts): it loads one ONNX session from the options in its first argument, says `ready` (or
 * `failed`), then answers each `run` over IPC, one at a time. It exits when its parent goes away.
 */
import { loadOnnxSession, OnnxSessionError, type OnnxSessionOptions } from './onnx-session.js'
import type { SessionReply, SessionRequest } from './session-protocol.js'

const send = (reply: SessionReply): void => {
  process.send?.(reply)
}

const failure = (error: unknown): { kind: 'missing' | 'load' | 'run'; message: string } =>
  error instanceof OnnxSessionError ? { kind: error.kind, message: error.message } : { kind: 'run', message: error instanceof Error ? error.message : String(error) }

process.on('disconnect', () => process.exit(0))

const options = JSON.parse(process.argv[2] ?? '{}') as OnnxSessionOptions
try {
  const session = await loadOnnxSession(options)
  process.on('message', (request: SessionRequest) => {
    session.run(request.texts).then(
      (vectors) => send({ kind: 'done', id: request.id, vectors }),
      (error: unknown) => send({ kind: 'error', id: request.id, error: failure(error) })
    )
  })
  send({ kind: 'ready' })
} catch (error) {
  send({ kind: 'failed', error: failure(error) })
  process.disconnect()
}
