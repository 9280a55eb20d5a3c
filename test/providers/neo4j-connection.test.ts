import { createServer, type Socket } from 'node:net'
import { describe, expect, inject, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import { createNeo4jConnection, mapNeo4jError } from '../../src/providers/neo4j/connection.js'

describe('createNeo4jConnection', () => {
  it('runs parameterised statements and reports health', async () => {
    const connection = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: 5000 })
    try {
      const result = await connection.run('RETURN $x AS x', { x: `") RETURN 1 //` }, 'READ')
      expect(result.records[0]?.get('x')).toBe(`") RETURN 1 //`)
      expect(await connection.health()).toMatchObject({ backend: 'neo4j', ok: true })
    } finally {
      await connection.close()
    }
  })

  it('takes the driver\'s neo4j:// routing URI: one Community server routes reads and writes to itself (docs/deployment.md)', async () => {
    const routed = inject('neo4jUri').replace(/^bolt:/, 'neo4j:')
    expect(routed).toMatch(/^neo4j:\/\//)
    const connection = createNeo4jConnection({ uri: routed, timeoutMs: 10_000 })
    const marker = `routed-${Date.now()}-${process.pid}`
    try {
      await connection.run('CREATE (:RoutingProbe {marker: $marker})', { marker }, 'WRITE')
      const read = await connection.run('MATCH (p:RoutingProbe {marker: $marker}) RETURN count(p) AS n', { marker }, 'READ')
      expect(Number(read.records[0]?.get('n'))).toBe(1)
      expect(await connection.health()).toMatchObject({ backend: 'neo4j', ok: true })
    } finally {
      await connection.run('MATCH (p:RoutingProbe {marker: $marker}) DELETE p', { marker }, 'WRITE').catch(() => undefined)
      await connection.close()
    }
  })

  it('a caller\'s signal cancels the running statement: the server no longer runs it', async () => {
    const connection = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: 60_000 })
    const marker = `recall-cancel-${Date.now()}`
    // About a minute of work on this machine, tagged so it can be found among the server's transactions.
    const slow = `UNWIND range(1, 2000000000) AS x WITH x WHERE x % 7 = 0 RETURN count(*) AS n, '${marker}' AS tag`
    const running = async () => {
      const { records } = await connection.run('SHOW TRANSACTIONS YIELD currentQuery RETURN currentQuery', {}, 'READ')
      return records.map((r) => String(r.get('currentQuery'))).filter((q) => q.includes(marker) && !q.includes('SHOW TRANSACTIONS')).length
    }
    try {
      const controller = new AbortController()
      const call = connection.run(slow, {}, 'READ', controller.signal)
      await expect.poll(running, { timeout: 20_000, interval: 100 }).toBe(1)
      const started = performance.now()
      controller.abort(new BackendTimeoutError('episodic-graph:neo4j', 'no answer within 200 ms'))
      await expect(call).rejects.toMatchObject({ backend: 'episodic-graph:neo4j', message: 'no answer within 200 ms' })
      expect(performance.now() - started).toBeLessThan(1000)
      await expect.poll(running, { timeout: 10_000, interval: 100 }).toBe(0)
    } finally {
      await connection.close()
    }
  }, 60_000)

  it('a Cypher error becomes UnexpectedResponseError naming neo4j', async () => {
    const connection = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: 5000 })
    try {
      await expect(connection.run('RETURN nope(')).rejects.toBeInstanceOf(UnexpectedResponseError)
    } finally {
      await connection.close()
    }
  })

  it('nothing listening: BackendUnavailableError at once', async () => {
    const probe = createServer()
    const port = await new Promise<number>((done) => probe.listen(0, '127.0.0.1', () => done((probe.address() as { port: number }).port)))
    await new Promise((done) => probe.close(done))
    const connection = createNeo4jConnection({ uri: `bolt://127.0.0.1:${port}`, timeoutMs: 2000 })
    try {
      const started = performance.now()
      await expect(connection.run('RETURN 1')).rejects.toBeInstanceOf(BackendUnavailableError)
      expect(performance.now() - started).toBeLessThan(1000)
    } finally {
      await connection.close()
    }
  })

  it('a server that accepts but never answers: a provider error within the timeout', async () => {
    const sockets: Socket[] = []
    const silent = createServer((socket) => void sockets.push(socket))
    const port = await new Promise<number>((done) => silent.listen(0, '127.0.0.1', () => done((silent.address() as { port: number }).port)))
    const connection = createNeo4jConnection({ uri: `bolt://127.0.0.1:${port}`, timeoutMs: 1000, writeTimeoutMs: 1000 })
    try {
      const started = performance.now()
      const error = await connection.run('RETURN 1').then(() => null, (e: unknown) => e)
      const ms = performance.now() - started
      expect(error instanceof BackendTimeoutError || error instanceof BackendUnavailableError).toBe(true)
      expect(error).toMatchObject({ backend: 'neo4j' })
      expect(ms).toBeLessThan(1500)
    } finally {
      await connection.close()
      for (const s of sockets) s.destroy()
      await new Promise((done) => silent.close(done))
    }
  })

  it('mapNeo4jError keeps provider errors and maps the rest', () => {
    const timeout = new BackendTimeoutError('neo4j', 'slow')
    expect(mapNeo4jError(timeout)).toBe(timeout)
    expect(mapNeo4jError(new Error('boom'))).toBeInstanceOf(UnexpectedResponseError)
    expect(mapNeo4jError(new Error('Connection acquisition timed out in 10 ms'))).toBeInstanceOf(BackendTimeoutError)
  })
})
