import { resolve, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { loadOnnxSession, type OnnxSession, type OnnxSessionOptions } from '../../src/providers/embedder/onnx-session.js'
import { SessionProcess } from '../../src/providers/embedder/session-process-client.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'
import { buildTestApp } from '../helpers/build.js'

// The real model (`make model`); like test/providers/embedder.local.test.ts, the test fails rather than skips without it.
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
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describeEmbedderContract(
  'local, a pool of 2 session processes',
  async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'processes' })
    await embedder.init()
    return embedder
  },
  { dimensions: 512, queryInstruction: QUERY_INSTRUCTION }
)

describe('a text has the same vector bytes whichever session embeds it, alone or under load', () => {
  // The reference: one session in this process, one text at a time (the service's path before the pool).
  let reference: string[]
  let inProcess: OnnxSession
  const processes = [new SessionProcess(SESSION), new SessionProcess(SESSION), new SessionProcess(SESSION)]

  beforeAll(async () => {
    inProcess = await loadOnnxSession(SESSION)
    reference = []
    for (const text of TEXTS) reference.push(bytes((await inProcess.run([text]))[0]!))
    await Promise.all(processes.map((p) => p.start()))
  })

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.dispose()))
    await inProcess.dispose()
  })

  it('each session process, alone', async () => {
    for (const session of processes) {
      const got: string[] = []
      for (const text of TEXTS) got.push(bytes((await session.run([text]))[0]!))
      expect(got).toEqual(reference)
    }
  })

  it('every session process at once, four rounds over the texts each, while this process runs its own session too', async () => {
    const rounds = 4
    const perSession = processes.map(async (session, s) => {
      const got: Array<[number, string]> = []
      for (let r = 0; r < rounds; r++) {
        // Each session starts at another text, so different texts run side by side.
        for (let k = 0; k < TEXTS.length; k++) {
          const i = (k + s * 3 + r) % TEXTS.length
          got.push([i, bytes((await session.run([TEXTS[i]!]))[0]!)])
        }
      }
      return got
    })
    const local = (async () => {
      for (let r = 0; r < rounds; r++) for (const text of TEXTS) await inProcess.run([text])
    })()
    const [results] = await Promise.all([Promise.all(perSession), local])
    for (const got of results) {
      expect(got).toHaveLength(rounds * TEXTS.length)
      for (const [i, vector] of got) expect(vector).toBe(reference[i])
    }
  })

  it('through the embedder with 3 sessions and 24 concurrent callers', async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 3, pool: 'processes' })
    try {
      await embedder.init()
      expect(embedder.sessionPids()).toHaveLength(3)
      const calls = Array.from({ length: 24 }, (_, c) => c % TEXTS.length)
      const got = await Promise.all(calls.map(async (i) => bytes((await embedder.embedPassages([TEXTS[i]!]))[0]!)))
      expect(got).toEqual(calls.map((i) => reference[i]))
      // One call of many texts spreads them over the sessions and keeps their order.
      expect((await embedder.embedPassages(TEXTS)).map(bytes)).toEqual(reference)
    } finally {
      await embedder.close()
    }
  })
})

describe('the pool: one queue, session processes', () => {
  const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'processes' })

  beforeAll(async () => {
    await embedder.init()
  })

  afterAll(async () => {
    await embedder.close()
  })

  it('counts the runs waiting for any session as one queue', async () => {
    expect(embedder.backlog()).toEqual({ queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 })
    // Warm the mean run duration the expected wait is made of.
    await embedder.embedQueries(['预热'])
    const runs = Array.from({ length: 12 }, (_, i) => embedder.embedQueries([`排队的问题 ${i}`]))
    await new Promise((r) => setImmediate(r))
    // The lone-run session takes the first; the two session processes take one each and, as their runs are short, one
    // more behind it (pipelining); the other seven wait in the one queue (a run may have finished meanwhile on a busy machine).
    const busy = embedder.backlog()
    expect(busy.queued).toBeGreaterThanOrEqual(5)
    expect(busy.queued).toBeLessThanOrEqual(7)
    expect(busy.expectedWaitMs).toBeGreaterThan(0)
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

  it('a session process that dies fails the run it held, and is replaced for the next runs', async () => {
    const [victim] = embedder.sessionPids()
    const runs = Array.from({ length: 6 }, (_, i) => embedder.embedPassages([`进程退出时的文本 ${i}`]))
    process.kill(victim!, 'SIGKILL')
    const settled = await Promise.allSettled(runs)
    for (const s of settled) if (s.status === 'rejected') expect(s.reason).toBeInstanceOf(UnexpectedResponseError)
    const after = await Promise.all(TEXTS.map((t) => embedder.embedPassages([t])))
    expect(after).toHaveLength(TEXTS.length)
    const pids = embedder.sessionPids()
    expect(pids).toHaveLength(2)
    expect(pids).not.toContain(victim)
  })

  it('close ends every session process', async () => {
    const other = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'processes' })
    await other.init()
    const pids = other.sessionPids()
    expect(pids.every(alive)).toBe(true)
    await other.close()
    expect(pids.some(alive)).toBe(false)
    await expect(other.embedPassages(['你好'])).rejects.toBeInstanceOf(BackendUnavailableError)
  })

  it('a missing model fails the load with BackendUnavailableError naming `make model`, in the session processes too', async () => {
    const missing = new LocalEmbedder({ modelDir: join(MODEL_DIR, 'no-such-folder'), modelName: MODEL_NAME, sessions: 2, pool: 'processes' })
    await expect(missing.init()).rejects.toThrow(/make model/)
    await expect(missing.embedQueries(['你好'])).rejects.toBeInstanceOf(BackendUnavailableError)
    await missing.close()
  })
})

describe.each(['processes', 'threads'])('the service on the pool (EMBEDDING_SESSIONS=2, EMBEDDING_POOL=%s)', (pool) => {
  it('ingests and answers hybrid through the sessions, and serves their queue on /metrics', async () => {
    const { app, close } = await buildTestApp({ EMBEDDING_SESSIONS: '2', EMBEDDING_POOL: pool, CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0' })
    try {
      const documents = [
        { id: 'cough', text: '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查，必要时做支气管激发试验。' },
        { id: 'pork', text: '红烧肉的做法：五花肉切块，焯水后加冰糖炒色。' },
        { id: 'redis', text: 'Redis 集群的主从切换由哨兵发起，故障转移后客户端需要刷新拓扑。' }
      ]
      const ingest = await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'default', documents } })
      expect(ingest.statusCode).toBe(200)
      const answers = await Promise.all(['咳嗽三周以上要做什么检查', '红烧肉怎么做', 'Redis 主从切换'].map((q) =>
        app.inject({ method: 'GET', url: `/retrieve?${new URLSearchParams({ mode: 'hybrid', q, top_k: '3', legs: 'vector' }).toString()}` })))
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200])
      expect(answers.map((a) => (a.json() as { recall_bundle: Array<{ id: string }> }).recall_bundle[0]!.id.split('#')[0])).toEqual(['cough', 'pork', 'redis'])
      const metrics = await app.inject({ method: 'GET', url: '/metrics' })
      expect(metrics.body).toMatch(/^recall_embedding_queued_runs 0$/m)
    } finally {
      await close()
    }
  })
})
