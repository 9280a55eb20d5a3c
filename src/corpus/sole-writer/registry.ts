/** Enough to find a process: the host it runs on, its pid, when it started, and a random id of this run. */
export interface WriterIdentity {
  instance: string
  host: string
  pid: number
  /** ISO 8601. */
  startedAt: string
}

/** A registration as the Qdrant and DATA_DIR registries store it: the holder, and when its lease ends. */
export interface StoredRegistration {
  instance: string
  host: string
  pid: number
  started_at: string
  /** When the holder last wrote it, in ms since the epoch on the holder's clock. */
  heartbeat_at: number
  lease_ms: number
}

/** The answer to a claim: held by the claimant, or by another instance whose registration lasts `endsInMs` more. */
export type Claim = { held: true } | { held: false; holder: WriterIdentity; endsInMs: number }

/**
 * Where the only writer of a set of shared stores registers itself (`REPLICAS=1` over Qdrant), with a lease:
 * a registration not renewed within its lease ends by itself, so a killed writer blocks its replacement for
 * one lease at most.
 */
export interface SoleWriterRegistry {
  /** Where the registration lives, in words (`Redis key …`, `Qdrant collection …`), for messages. */
  readonly where: string
  /**
   * Registers `self` for `leaseMs` when no other instance's registration is live, and answers `held: true`;
   * otherwise leaves the other's registration as it is and names it. Claiming again as the holder renews the
   * registration for `leaseMs` from now. Two instances claiming at once: at most one is answered `held: true`.
   */
  claim(self: WriterIdentity, leaseMs: number): Promise<Claim>
  /** Ends `self`'s registration; one held by another instance stays, and so does nothing at all. */
  release(self: WriterIdentity): Promise<void>
}
