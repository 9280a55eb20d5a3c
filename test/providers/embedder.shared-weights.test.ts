import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { loadOnnxSession, type OnnxSessionOptions } from '../../src/providers/embedder/onnx-session.js'
import { SessionThread } from '../../src/providers/embedder/session-thread-client.js'
import { sharedWeightsModel } from '../../src/providers/embedder/shared-weights.js'

// The real model (`make model`); like the other local embedder tests, it fails rather than skips without it.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const MODEL_NAME = 'bge-small-zh-v1.5'
const FOLDER = join(MODEL_DIR, MODEL_NAME)
const SESSION: OnnxSessionOptions = { folder: FOLDER, maxLength: 512, dimensions: 512, threads: 1 }
const QUERY_INSTRUCTION = '为这个句子生成表示以用于检索相关文章：'

const TEXTS = [
  QUERY_INSTRUCTION + '咳嗽持续三周以上应该做哪些检查？',
  QUERY_INSTRUCTION + 'Redis 集群的主从切换',
  'API 流式返回改造：鉴权中间件保持不变，SSE 心跳间隔 15 秒。',
  '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查，必要时做支气管激发试验。',
  // Past the 512-token window: cut, as every session cuts it.
  '检索增强生成把相关文档片段交给大模型。'.repeat(60)
]

const hex = (v: Float32Array): string => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')

/** The data file's mappings in this process (/proc/self/maps): one set per session that maps it. */
async function mappingsOf(file: string): Promise<number> {
  return (await readFile('/proc/self/maps', 'utf8')).split('\n').filter((line) => line.endsWith(file)).length
}

describe('one copy of the weights for every session (EMBEDDING_WEIGHTS=shared)', () => {
  let dir: string
  // The reference, independent of src/: transformers.js's own model call on the source model, [CLS], L2-normalised.
  let reference: string[]

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-weights-'))
    const { AutoModel, AutoTokenizer } = await import('@huggingface/transformers')
    const tokenizer = await AutoTokenizer.from_pretrained(FOLDER, { local_files_only: true })
    const model = await AutoModel.from_pretrained(FOLDER, { local_files_only: true, dtype: 'q8', device: 'cpu', session_options: { intraOpNumThreads: 1 } })
    reference = []
    for (const text of TEXTS) {
      const inputs = tokenizer([text], { padding: true, truncation: true, max_length: 512 })
      const { last_hidden_state: state } = (await model(inputs)) as { last_hidden_state: { data: Float32Array } }
      const cls = state.data.slice(0, 512)
      const norm = Math.sqrt(cls.reduce((sum, x) => sum + x * x, 0))
      reference.push(hex(cls.map((x) => x / norm)))
    }
    await model.dispose()
  })

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes the copy once, a graph and one data file in a folder named for the model and the options, nothing left half-made', async () => {
    const graph = await sharedWeightsModel(SESSION, dir)
    const data = join(graph, '..', 'model.data')
    const written = (await stat(data)).mtimeMs
    expect(await sharedWeightsModel(SESSION, dir)).toBe(graph)
    expect((await stat(data)).mtimeMs).toBe(written)
    // The packed weights are in the data file: larger than the source model's weights alone.
    expect((await stat(data)).size).toBeGreaterThan((await stat(join(FOLDER, 'onnx', 'model_quantized.onnx'))).size)
    const other = await sharedWeightsModel({ ...SESSION, threads: 2 }, dir)
    expect(other).not.toBe(graph)
    expect((await readdir(dir)).sort()).toEqual([graph, other].map((g) => g.split('/').at(-2)!).sort())
  })

  it('sessions on the copy give the reference bytes, in this thread and in two threads with concurrent runs', async () => {
    const graph = await sharedWeightsModel(SESSION, dir)
    const here = await loadOnnxSession({ ...SESSION, modelFile: graph })
    const threads = [new SessionThread({ ...SESSION, modelFile: graph }), new SessionThread({ ...SESSION, modelFile: graph })]
    try {
      await Promise.all(threads.map((t) => t.start()))
      for (let i = 0; i < TEXTS.length; i++) expect(hex((await here.run([TEXTS[i]!]))[0]!)).toBe(reference[i])
      const runs = await Promise.all(TEXTS.flatMap((text) => threads.map((t) => t.run([text]))))
      expect(runs.map((vectors) => hex(vectors[0]!))).toEqual(TEXTS.flatMap((_, i) => [reference[i], reference[i]]))
    } finally {
      await Promise.all(threads.map((t) => t.dispose()))
      await here.dispose()
    }
  })

  it('each session maps the one data file instead of reading the weights into its own memory', async () => {
    const graph = await sharedWeightsModel(SESSION, dir)
    const data = join(graph, '..', 'model.data')
    const first = new SessionThread({ ...SESSION, modelFile: graph })
    const second = new SessionThread({ ...SESSION, modelFile: graph })
    try {
      await first.start()
      const one = await mappingsOf(data)
      expect(one).toBeGreaterThan(0)
      await second.start()
      expect(await mappingsOf(data)).toBe(2 * one)
    } finally {
      await Promise.all([first.dispose(), second.dispose()])
    }
  })

  it('the embedder with two sessions loads from the copy and says nothing of copies in its health', async () => {
    const weightsDir = join(dir, 'embedder')
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads', weightsDir })
    try {
      const [vector] = await embedder.embedPassages([TEXTS[2]!])
      expect(hex(vector!)).toBe(reference[2])
      expect(await readdir(weightsDir)).toHaveLength(1)
      const [copy] = await readdir(weightsDir)
      expect(await mappingsOf(join(weightsDir, copy!, 'model.data'))).toBeGreaterThan(0)
      expect((await embedder.health()).detail).toBe(`local ${MODEL_NAME}`)
    } finally {
      await embedder.close()
    }
  })

  it('a folder that cannot hold the copy leaves each session its own copy: same bytes, and health says why', async () => {
    const blocked = join(dir, 'a-file')
    await writeFile(blocked, 'not a folder')
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads', weightsDir: join(blocked, 'weights') })
    try {
      const [vector] = await embedder.embedPassages([TEXTS[3]!])
      expect(hex(vector!)).toBe(reference[3])
      const health = await embedder.health()
      expect(health.ok).toBe(true)
      expect(health.detail).toMatch(/a copy of the weights per session: .*ENOTDIR/)
    } finally {
      await embedder.close()
    }
  })

  it('a copy whose bytes changed on disk is made again, and its sessions give the reference bytes', async () => {
    const graph = await sharedWeightsModel(SESSION, dir)
    const data = join(graph, '..', 'model.data')
    const original = await readFile(data)
    const bytes = Buffer.from(original)
    const middle = bytes.length >> 1
    bytes[middle] = bytes[middle]! ^ 0xff
    await writeFile(data, bytes)
    expect(await sharedWeightsModel(SESSION, dir)).toBe(graph)
    expect((await readFile(data)).equals(original)).toBe(true)
    const session = await loadOnnxSession({ ...SESSION, modelFile: graph })
    try {
      for (let i = 0; i < TEXTS.length; i++) expect(hex((await session.run([TEXTS[i]!]))[0]!)).toBe(reference[i])
    } finally {
      await session.dispose()
    }
  })

  it('a copy ONNX Runtime refuses to load leaves each session its own copy: same bytes, and health says why', async () => {
    const weightsDir = join(dir, 'refused')
    // The copy the embedder will look for, cut short and given a matching digest, as if written that way.
    const graph = await sharedWeightsModel(SESSION, weightsDir)
    const folder = join(graph, '..')
    await truncate(join(folder, 'model.data'), 1024)
    const digest = createHash('sha256').update(await readFile(graph)).update(await readFile(join(folder, 'model.data'))).digest('hex')
    await writeFile(join(folder, 'sha256'), digest)
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 2, pool: 'threads', weightsDir })
    try {
      const [vector] = await embedder.embedPassages([TEXTS[1]!])
      expect(hex(vector!)).toBe(reference[1])
      expect((await embedder.health()).detail).toMatch(/a copy of the weights per session: the shared copy .* did not load/)
    } finally {
      await embedder.close()
    }
  })

  it('one session alone writes no copy', async () => {
    const weightsDir = join(dir, 'alone')
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, threads: 1, sessions: 0, weightsDir })
    try {
      const [vector] = await embedder.embedPassages([TEXTS[4]!])
      expect(hex(vector!)).toBe(reference[4])
      await expect(stat(weightsDir)).rejects.toThrow(/ENOENT/)
    } finally {
      await embedder.close()
    }
  })
})
