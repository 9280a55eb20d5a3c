import { Type } from 'typebox'

/**
 * A namespace's generation: an integer that grows with every write of the namespace, through any replica.
 * Opaque apart from its order (it starts from the clock in microseconds, so it stays increasing when the
 * shared counter is lost).
 */
export const GenerationSchema = Type.Integer({
  minimum: 0,
  description: 'The namespace\'s generation after this write. Send it as `min_generation` to a later read, through any replica, ' +
    'to read this write (read-your-writes). Absent when the generation store could not record the write in time.',
  examples: [1764580000000042]
})

export const MinGenerationSchema = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Read-your-writes: answer only from state that includes every write of the namespace up to this `generation` ' +
    '(as a write answered it). A replica that has not seen it waits up to MIN_GENERATION_WAIT_MS (default 1000), then answers ' +
    '503 `RECALL_STALE_REPLICA` with Retry-After.',
  examples: [1764580000000042]
})

export const ReadGenerationSchema = Type.Integer({
  minimum: 0,
  description: 'The generation this answer read: every write of the namespace up to it is included. Absent when the generation store ' +
    'could not be read (then no `min_generation` is honoured either).',
  examples: [1764580000000042]
})

/** The 503 a read answers when it names a generation this replica has not seen in time. */
export const staleReplicaExample = {
  statusCode: 503, code: 'RECALL_STALE_REPLICA', error: 'Service Unavailable',
  message: 'stale_replica: min_generation 1764580000000042 of namespace "default" was not seen within 1000 ms; it has seen generation 1764580000000041'
}
