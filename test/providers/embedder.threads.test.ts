import { resolve, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError } from '../../src/providers/errors.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { loadOnnxSession, type OnnxSession, type OnnxSessionOptions } from '../../src/providers/embedder/onnx-session.js'
import { SessionProcess } from '../../src/providers/embedder/session-process-client.js'
import { SessionThread } from '../../src/providers/embedder/session-thread-client.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'

// The real model (`make model`); like the other local embedder tests, it fails rather than skips without it.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const MODEL_NAME = 'bge-small-zh-v1.5'
const QUERY_INSTRUCTION = '为这个句子生成表示以用于检索相关文章：'
const SESSION: OnnxSessionOptions = { folder: join(MODEL_DIR, MODEL_NAME), maxLength: 512, dimensions: 512, threads: 1 }

// Short and long, Chinese and mixed, queries with their instruction and passages; one longer than the 512-token window.
const TEXTS = [
  '咳嗽持续三周以上应该做哪些检查？',
  QUERY_INSTRUCTION + '怎么重置我的账户密码',
  'Redis 集群的主从切换',
  'API 流式返回改造：鉴权中间件保持不变，SSE 心跳间隔 15 秒。',
  '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查，必要时做支气管激发试验。',
  '检索增强生成把相关文档片段交给大模型。'.repeat(60),
  '红烧肉的做法：五花肉切块，焯水后加冰糖炒色。',
  QUERY_INSTRUCTION + '这款手机的电池续航时间很短'
]

const bytes = (v: Float32Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')

describeEmbedderContract(
  'local, a pool of 2 session threads',
  async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads' })
    await embedder.init()
    return embedder
  },
  { dimensions: 512, queryInstruction: QUERY_INSTRUCTION }
)

describe('session threads give the bytes of a session in this thread and of a session process, alone or side by side', () => {
  // The reference: one session in this thread, one text at a time.
  let reference: string[]
  let inThread: OnnxSession
  const threads = [new SessionThread(SESSION), new SessionThread(SESSION), new SessionThread(SESSION)]

  beforeAll(async () => {
    inThread = await loadOnnxSession(SESSION)
    reference = []
    for (const text of TEXTS) reference.push(bytes((await inThread.run([text]))[0]!))
    await Promise.all(threads.map((t) => t.start()))
  })

  afterAll(async () => {
    await Promise.all(threads.map((t) => t.dispose()))
    await inThread.dispose()
  })

  it('a session process gives the reference bytes (the two pools embed alike)', async () => {
    const child = new SessionProcess(SESSION)
    try {
      const got: string[] = []
      for (const text of TEXTS) got.push(bytes((await child.run([text]))[0]!))
      expect(got).toEqual(reference)
    } finally {
      await child.dispose()
    }
  })

  it('each session thread, alone', async () => {
    for (const session of threads) {
      const got: string[] = []
      for (const text of TEXTS) got.push(bytes((await session.run([text]))[0]!))
      expect(got).toEqual(reference)
    }
  })

  it('every session thread at once, four rounds over the texts each (onnxruntime-node 1.21 aborted the process here)', async () => {
    const rounds = 4
    const results = await Promise.all(threads.map(async (session, s) => {
      const got: Array<[number, string]> = []
      for (let r = 0; r < rounds; r++) {
        // Each thread starts at another text, so different texts run side by side.
        for (let k = 0; k < TEXTS.length; k++) {
          const i = (k + s * 3 + r) % TEXTS.length
          got.push([i, bytes((await session.run([TEXTS[i]!]))[0]!)])
        }
      }
      return got
    }))
    for (const got of results) {
      expect(got).toHaveLength(rounds * TEXTS.length)
      for (const [i, vector] of got) expect(vector).toBe(reference[i])
    }
  })

  it('through the embedder with 3 threads and 24 concurrent callers, order kept', async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 3, pool: 'threads' })
    try {
      await embedder.init()
      const calls = Array.from({ length: 24 }, (_, c) => c % TEXTS.length)
      const got = await Promise.all(calls.map(async (i) => bytes((await embedder.embedPassages([TEXTS[i]!]))[0]!)))
      expect(got).toEqual(calls.map((i) => reference[i]))
      expect((await embedder.embedPassages(TEXTS)).map(bytes)).toEqual(reference)
      // No session process: the sessions are threads of this process.
      expect(embedder.sessionPids()).toEqual([])
    } finally {
      await embedder.close()
    }
  })

  it('queries through the embedder with 2 threads and 24 concurrent callers (queriesHere: short ones also run in this thread): the reference bytes', async () => {
    const queries = TEXTS.slice(0, 4)
    const expected: string[] = []
    for (const q of queries) expected.push(bytes((await inThread.run([QUERY_INSTRUCTION + q]))[0]!))
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads', queriesHere: true })
    try {
      await embedder.init()
      const calls = Array.from({ length: 24 }, (_, c) => c % queries.length)
      const got = await Promise.all(calls.map(async (i) => bytes((await embedder.embedQueries([queries[i]!]))[0]!)))
      expect(got).toEqual(calls.map((i) => expected[i]))
    } finally {
      await embedder.close()
    }
  })

  it('one session thread of 2 intra-op threads, spinning on or off, with 24 concurrent callers: the reference bytes', async () => {
    for (const spinning of [true, false]) {
      const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 2, spinning, sessions: 1, pool: 'threads' })
      try {
        await embedder.init()
        const calls = Array.from({ length: 24 }, (_, c) => c % TEXTS.length)
        const got = await Promise.all(calls.map(async (i) => bytes((await embedder.embedPassages([TEXTS[i]!]))[0]!)))
        expect(got).toEqual(calls.map((i) => reference[i]))
      } finally {
        await embedder.close()
      }
    }
  })
})

describe('the pool of threads: one queue', () => {
  const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads' })

  beforeAll(async () => {
    await embedder.init()
  })

  afterAll(async () => {
    await embedder.close()
  })

  it('counts the runs waiting for any session as one queue', async () => {
    await embedder.embedQueries(['预热'])
    let done = 0
    const runs = Array.from({ length: 12 }, (_, i) => embedder.embedQueries([`排队的问题 ${i}`]).finally(() => { done++ }))
    await new Promise((r) => setImmediate(r))
    // Two threads take a run each and one behind it; the other eight wait, less those a thread took once a run of its
    // own finished meanwhile (a fast run, or the busy machine's timing: 7 waited once in a CI-like run beside other tests).
    const busy = embedder.backlog()
    expect(busy.queued).toBeGreaterThanOrEqual(8 - done)
    expect(busy.queued).toBeLessThanOrEqual(10)
    await Promise.all(runs)
    expect(embedder.backlog()).toEqual({ queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 })
  })

  it('drops a queued run whose caller aborted, and answers the others', async () => {
    const controller = new AbortController()
    const ahead = Array.from({ length: 4 }, (_, i) => embedder.embedQueries([`前面的问题 ${i}`]))
    const dropped = embedder.embedQueries(['放弃的问题'], controller.signal)
    controller.abort()
    await expect(dropped).rejects.toBeInstanceOf(BackendTimeoutError)
    expect(await Promise.all(ahead)).toHaveLength(4)
  })

  it('a missing model fails the load with BackendUnavailableError naming `make model`, in the threads too', async () => {
    const missing = new LocalEmbedder({ modelDir: join(MODEL_DIR, 'no-such-folder'), modelName: MODEL_NAME, sessions: 2, pool: 'threads' })
    await expect(missing.init()).rejects.toThrow(/make model/)
    await expect(missing.embedQueries(['你好'])).rejects.toBeInstanceOf(BackendUnavailableError)
    await missing.close()
  })

  it('close ends the threads: later calls are refused and a thread run fails', async () => {
    const other = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads' })
    await other.init()
    expect(await other.embedPassages(['你好'])).toHaveLength(1)
    await other.close()
    await expect(other.embedPassages(['你好'])).rejects.toBeInstanceOf(BackendUnavailableError)
    const thread = new SessionThread(SESSION)
    await thread.start()
    await thread.dispose()
    await expect(thread.run(['你好'])).rejects.toThrow(/closed/)
  })
})
