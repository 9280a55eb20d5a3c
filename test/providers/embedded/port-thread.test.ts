import { describe, expect, it } from 'vitest'
import { PortThread } from '../../../src/providers/embedded/port-thread.js'
import { BackendUnavailableError } from '../../../src/providers/errors.js'
import { UnknownEntitiesError } from '../../../src/providers/knowledge-graph/port.js'

const entry = new URL('../../fixtures/port-thread/target.ts', import.meta.url)
const thread = (data: unknown = { dir: 'd' }) => new PortThread(entry, data, 'knowledge-graph:memory', 'the test target', {
  UnknownEntitiesError: ({ fields }) => new UnknownEntitiesError(fields?.['missing'] as string[], fields?.['references'] as UnknownEntitiesError['references'])
})

describe('PortThread', () => {
  it('calls the served object by method, with its workerData, answering in call order', async () => {
    const t = thread({ dir: '/data/graph', compactionFloorBytes: 0 })
    try {
      expect(await t.call('given', [])).toEqual({ dir: '/data/graph', compactionFloorBytes: 0 })
      const signal = new AbortController().signal
      expect(await t.call('echo', ['ns', new Map([['a', 1]]), signal, { limit: 2 }])).toEqual(['ns', new Map([['a', 1]]), undefined, { limit: 2 }])
      const answers = await Promise.all(['a', 'b', 'c'].map((v) => t.call<string[]>('record', [v])))
      expect(answers).toEqual([['a'], ['a', 'b'], ['a', 'b', 'c']])
    } finally {
      await t.close()
    }
  })

  it('rejects with the class the object threw: a provider error with its backend and cause, its own error class, a missing method', async () => {
    const t = thread()
    try {
      const unavailable = await t.call('unavailable', []).catch((error: unknown) => error)
      expect(unavailable).toBeInstanceOf(BackendUnavailableError)
      expect(unavailable).toMatchObject({ backend: 'knowledge-graph:memory', message: 'disk gone', name: 'BackendUnavailableError' })
      expect((unavailable as Error).cause).toBeInstanceOf(RangeError)
      const unknown = await t.call('unknown', []).catch((error: unknown) => error)
      expect(unknown).toBeInstanceOf(UnknownEntitiesError)
      expect(unknown).toMatchObject({ missing: ['x'], references: [{ index: 0, field: 'source', id: 'x' }], message: 'unknown entities: "x"' })
      await expect(t.call('nothing', [])).rejects.toThrow(new TypeError('no method nothing'))
      await expect(t.call('unclonable', [])).rejects.toThrow(/could not be cloned/)
      expect(await t.call('record', ['still answers'])).toEqual(['still answers'])
    } finally {
      await t.close()
    }
  })

  it('a thread that stops fails the call under way and every call after it with BackendUnavailableError', async () => {
    const t = thread()
    await expect(t.call('exit', [])).rejects.toThrow(new BackendUnavailableError('knowledge-graph:memory', 'the thread that holds the test target stopped (exit code 3); restart the service'))
    await expect(t.call('record', ['x'])).rejects.toBeInstanceOf(BackendUnavailableError)
    await t.close()
  })

  it('close ends the thread after the object closed; a thread never started is not started by close', async () => {
    const never = thread()
    await never.close()
    const t = thread()
    expect(await t.call('record', ['x'])).toEqual(['x'])
    await t.close()
    // a call after close starts a thread again, which stops like any other
    await expect(t.call('record', ['y'])).resolves.toEqual(['y'])
    await expect(t.call('exit', [])).rejects.toBeInstanceOf(BackendUnavailableError)
    await t.close()
  })
})
