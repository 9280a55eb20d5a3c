/**
 * One Neo4j connection for every provider that needs the graph database: a driver with bounded connection,
 * acquisition and transaction times, queries and write transactions with a deadline, and the driver's
 * failures mapped once onto the provider errors.
 */
import neo4j, { type Driver, type ManagedTransaction, type QueryResult, type RecordShape } from 'neo4j-driver'
import {
  abortError,
  BackendTimeoutError,
  BackendUnavailableError,
  ProviderError,
  UnexpectedResponseError,
  probeHealth,
  type BackendHealth
} from '../errors.js'

export interface Neo4jConnectionOptions {
  /** Bolt URI, e.g. `bolt://127.0.0.1:7687` or `neo4j://host:7687`. */
  uri: string
  /** User name; with no user the driver connects without authentication. */
  user?: string
  password?: string
  /** Database name; default: the server's default database. */
  database?: string
  /** Upper bound of one read (connect, acquire, run, read the result), in milliseconds. Default 5000. */
  timeoutMs?: number
  /**
   * Upper bound of one write (`write()`, and `run()` in `WRITE` mode: schema statements too), in milliseconds.
   * Separate from reads because a first write on a busy server (plan compile, lock waits, index
   * population) can take far longer than a read budget allows. Default 60,000.
   */
  writeTimeoutMs?: number
  /** The backend name errors and health carry. Default `neo4j`; each store names its own view (`named`). */
  backend?: string
  /** Largest number of pooled connections. Default 50. */
  maxConnectionPoolSize?: number
}

/** The backend name of a connection nobody named. */
const NEO4J_BACKEND = 'neo4j'

export interface Neo4jConnection {
  readonly driver: Driver
  readonly database: string | undefined
  readonly timeoutMs: number
  /**
   * Runs one parameterised statement in its own transaction (a read transaction when `mode` is `READ`)
   * within `timeoutMs` for a read and `writeTimeoutMs` for a write. When `signal` aborts first, the session is closed
   * (the driver resets the connection, and the server terminates the transaction) and the call rejects with
   * `abortError(signal)`. A connection that died since it was pooled (the server restarted) is retried once.
   * Throws BackendUnavailableError, BackendTimeoutError or UnexpectedResponseError.
   */
  run<R extends RecordShape = RecordShape>(cypher: string, params?: Record<string, unknown>, mode?: 'READ' | 'WRITE', signal?: AbortSignal): Promise<QueryResult<R>>
  /**
   * Runs `work` in one write transaction within `writeTimeoutMs`: committed when it resolves, rolled back when it
   * throws. Errors `work` throws itself (not the driver's) reach the caller unchanged.
   */
  write<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T>
  /** `RETURN 1` against the database; never throws. */
  health(): Promise<BackendHealth>
  /** The same driver under another backend name (stores sharing one database each report their own). */
  named(backend: string): Neo4jConnection
  /** Closes the driver, for every view of it. */
  close(): Promise<void>
}

/** Creates the driver; no connection is made until the first call. */
export function createNeo4jConnection(options: Neo4jConnectionOptions): Neo4jConnection {
  const timeoutMs = options.timeoutMs ?? 5000
  const writeTimeoutMs = options.writeTimeoutMs ?? 60_000
  const auth = options.user ? neo4j.auth.basic(options.user, options.password ?? '') : undefined
  const driver = neo4j.driver(options.uri, auth, {
    // A server that does not accept a connection within the read budget is down for writes too.
    connectionTimeout: timeoutMs,
    connectionAcquisitionTimeout: Math.max(timeoutMs, writeTimeoutMs),
    // run() and write() retry a dead pooled connection once themselves, within the deadline.
    maxTransactionRetryTime: 0,
    maxConnectionPoolSize: options.maxConnectionPoolSize ?? 50,
    disableLosslessIntegers: true,
    userAgent: 'recall'
  })
  return connectionView(driver, options.database || undefined, timeoutMs, writeTimeoutMs, options.backend ?? NEO4J_BACKEND)
}

function connectionView(driver: Driver, database: string | undefined, timeoutMs: number, writeTimeoutMs: number, backend: string): Neo4jConnection {
  const withDeadline = async <T>(ms: number, work: (signal: AbortSignal) => Promise<T>, outer?: AbortSignal): Promise<T> => {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let onOuter: (() => void) | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort()
        reject(new BackendTimeoutError(backend, `neo4j did not answer within ${ms} ms`))
      }, ms)
      if (outer) {
        onOuter = () => {
          controller.abort()
          reject(abortError(outer, backend))
        }
        if (outer.aborted) onOuter()
        else outer.addEventListener('abort', onOuter, { once: true })
      }
    })
    try {
      return await Promise.race([work(controller.signal), deadline])
    } finally {
      clearTimeout(timer)
      if (onOuter) outer?.removeEventListener('abort', onOuter)
    }
  }

  // A connection that died since it was pooled (server restarted) is retried once at once; a transient
  // error (deadlock, lock timeout) up to three times with a short backoff. The deadline bounds it all.
  const onceMore = async <T>(signal: AbortSignal, attempt: () => Promise<T>): Promise<T> => {
    let lostConnection = false
    for (let transient = 0; ; ) {
      try {
        return await attempt()
      } catch (error) {
        if (signal.aborted) throw error
        if (isConnectionLoss(error) && !lostConnection) {
          lostConnection = true
          continue
        }
        if (isTransient(error) && transient < 3) {
          transient++
          await new Promise((done) => setTimeout(done, 25 * transient + Math.random() * 25))
          continue
        }
        throw error
      }
    }
  }

  const session = (mode: 'READ' | 'WRITE') =>
    driver.session({ database, defaultAccessMode: mode === 'READ' ? neo4j.session.READ : neo4j.session.WRITE })

  // Sessions and explicit transactions rather than executeQuery/executeWrite: the driver's managed retries
  // wait about a second even with maxTransactionRetryTime 0, and an outage must answer at once.
  const connection: Neo4jConnection = {
    driver,
    database,
    timeoutMs,
    async run<R extends RecordShape = RecordShape>(cypher: string, params: Record<string, unknown> = {}, mode: 'READ' | 'WRITE' = 'WRITE', cancel?: AbortSignal) {
      const ms = mode === 'READ' ? timeoutMs : writeTimeoutMs
      try {
        return await withDeadline(ms, (signal) =>
          onceMore(signal, async () => {
            const s = session(mode)
            const abort = () => void s.close()
            signal.addEventListener('abort', abort)
            try {
              return (await s.run(cypher, params, { timeout: ms })) as unknown as QueryResult<R>
            } finally {
              signal.removeEventListener('abort', abort)
              await s.close()
            }
          }),
          cancel
        )
      } catch (error) {
        throw mapNeo4jError(error, backend)
      }
    },
    async write<T>(work: (tx: ManagedTransaction) => Promise<T>): Promise<T> {
      const own = new WeakSet<object>()
      try {
        return await withDeadline(writeTimeoutMs, (signal) =>
          onceMore(signal, async () => {
            const s = session('WRITE')
            const abort = () => void s.close()
            signal.addEventListener('abort', abort)
            try {
              const tx = await s.beginTransaction({ timeout: writeTimeoutMs })
              let result: T
              try {
                // Work uses only run(), which a Transaction has as a ManagedTransaction does.
                result = await work(tx as unknown as ManagedTransaction)
              } catch (error) {
                if (error instanceof Object && !(error instanceof neo4j.Neo4jError)) own.add(error)
                await tx.rollback().catch(() => undefined)
                throw error
              }
              await tx.commit()
              return result
            } finally {
              signal.removeEventListener('abort', abort)
              await s.close()
            }
          })
        )
      } catch (error) {
        if (error instanceof Object && own.has(error)) throw error
        throw mapNeo4jError(error, backend)
      }
    },
    health(): Promise<BackendHealth> {
      return probeHealth(backend, async () => {
        await connection.run('RETURN 1 AS ok', {}, 'READ')
      })
    },
    named: (name) => connectionView(driver, database, timeoutMs, writeTimeoutMs, name),
    close: () => driver.close()
  }
  return connection
}

/** Whether the error means the connection or server went away (worth one retry on a fresh connection). */
function isConnectionLoss(error: unknown): boolean {
  return error instanceof neo4j.Neo4jError &&
    (error.code === neo4j.error.SERVICE_UNAVAILABLE || error.code === neo4j.error.SESSION_EXPIRED)
}

/** A Neo4j transient error (deadlock, lock wait): the same work may succeed when tried again. */
function isTransient(error: unknown): boolean {
  return error instanceof neo4j.Neo4jError && error.code.startsWith('Neo.TransientError.')
}

/** Maps whatever the driver threw onto the provider errors under `backend`; provider errors pass through. */
export function mapNeo4jError(error: unknown, backend: string = NEO4J_BACKEND): ProviderError {
  if (error instanceof ProviderError) return error
  const message = error instanceof Error ? error.message : String(error)
  const code = error instanceof neo4j.Neo4jError ? error.code : ''
  if (code === neo4j.error.SERVICE_UNAVAILABLE || code === neo4j.error.SESSION_EXPIRED) {
    return new BackendUnavailableError(backend, `neo4j is unavailable: ${message}`, { cause: error })
  }
  if (code.startsWith('Neo.ClientError.Security.')) {
    return new BackendUnavailableError(backend, `neo4j refused the credentials: ${message}`, { cause: error })
  }
  if (code.includes('TransactionTimedOut') || /timed out|timeout/i.test(message)) {
    return new BackendTimeoutError(backend, `neo4j timed out: ${message}`, { cause: error })
  }
  if (code.startsWith('Neo.TransientError.')) {
    return new BackendUnavailableError(backend, `neo4j is temporarily unavailable: ${message}`, { cause: error })
  }
  return new UnexpectedResponseError(backend, `neo4j: ${message}`, { cause: error })
}
