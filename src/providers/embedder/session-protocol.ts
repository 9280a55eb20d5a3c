/** The messages between the embedding pool and its session processes (IPC with `serialization: 'advanced'`). */
export interface SessionRequest {
  id: number
  texts: string[]
}

interface SessionFailure {
  kind: 'missing' | 'load' | 'run'
  message: string
}

export type SessionReply =
  | { kind: 'ready' }
  | { kind: 'failed'; error: SessionFailure }
  | { kind: 'done'; id: number; vectors: Float32Array[] }
  | { kind: 'error'; id: number; error: SessionFailure }
