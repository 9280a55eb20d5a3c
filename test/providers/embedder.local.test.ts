import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { InferenceSession, Tensor } from 'onnxruntime-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { createEmbedder } from '../../src/providers/embedder/index.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'

// The real model, fetched by `npm run model` (`make model`); the test fails rather than skips without it.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const MODEL_NAME = 'bge-small-zh-v1.5'
// As docs/api.md ("Hybrid in detail") states it, written out here rather than imported, so a wrong constant in src fails the contract.
const QUERY_INSTRUCTION = '为这个句子生成表示以用于检索相关文章：'

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? Number.NaN), 0)

describe('model folder', () => {
  it(`${MODEL_DIR}/${MODEL_NAME} exists (run \`npm run model\` first)`, () => {
    expect(existsSync(join(MODEL_DIR, MODEL_NAME, 'onnx', 'model_quantized.onnx'))).toBe(true)
  })
})

describeEmbedderContract(
  'local (batch of 1, the default)',
  async () => createEmbedder({ backend: 'local', modelDir: MODEL_DIR, modelName: MODEL_NAME }),
  { dimensions: 512, queryInstruction: QUERY_INSTRUCTION }
)

describeEmbedderContract(
  'local (batches of 2, so inputs cross batch boundaries)',
  async () => new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, batchSize: 2 }),
  { dimensions: 512, queryInstruction: QUERY_INSTRUCTION }
)

describe('LocalEmbedder with bge-small-zh-v1.5', () => {
  const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME })

  beforeAll(async () => {
    await embedder.init()
  })

  afterAll(async () => {
    await embedder.close()
  })

  // Hand-picked: [sentence, a paraphrase sharing few characters with it, an unrelated sentence].
  const triples: Array<[string, string, string]> = [
    ['咳嗽持续三周以上应该做哪些检查？', '咳了二十多天还没好，需要去医院查什么？', '这家餐厅的红烧肉味道很好，价格也便宜。'],
    ['怎么重置我的账户密码', '忘记登录密码了该如何找回', '明天北京有大雨，出门记得带伞'],
    ['这款手机的电池续航时间很短', '该手机电量消耗太快，用不了多久就没电了', '他每天早上六点起床去公园跑步']
  ]

  it.each(triples)('%s: its paraphrase is closer than an unrelated sentence', async (sentence, paraphrase, unrelated) => {
    const [s, p, u] = await embedder.embedPassages([sentence, paraphrase, unrelated])
    expect(dot(s!, p!)).toBeGreaterThan(dot(s!, u!))
    expect(dot(s!, p!)).toBeGreaterThan(dot(p!, u!))
  })

  it('a query finds its answer passage before unrelated passages', async () => {
    const [query] = await embedder.embedQueries(['咳嗽三周以上要做什么检查'])
    const passages = await embedder.embedPassages([
      '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查，必要时做支气管激发试验。',
      '上海证券交易所今日收盘，沪指上涨百分之一点二。',
      '红烧肉的做法：五花肉切块，焯水后加冰糖炒色。'
    ])
    const sims = passages.map((p) => dot(query!, p))
    expect(sims[0]).toBeGreaterThan(sims[1]!)
    expect(sims[0]).toBeGreaterThan(sims[2]!)
  })

  it('is the L2-normalised [CLS] state of the ONNX graph, computed here without transformers.js', async () => {
    // BERT's tokenizer makes every Han character its own token, so a pure-CJK text needs only the vocab.
    const text = '我是中国人'
    const tokenizer = JSON.parse(await readFile(join(MODEL_DIR, MODEL_NAME, 'tokenizer.json'), 'utf8')) as {
      model: { vocab: Record<string, number> }
    }
    const vocab = tokenizer.model.vocab
    const ids = ['[CLS]', ...text, '[SEP]'].map((token) => BigInt(vocab[token]!))
    const session = await InferenceSession.create(join(MODEL_DIR, MODEL_NAME, 'onnx', 'model_quantized.onnx'))
    const shape = [1, ids.length]
    const output = await session.run({
      input_ids: new Tensor('int64', BigInt64Array.from(ids), shape),
      attention_mask: new Tensor('int64', BigInt64Array.from(ids.map(() => 1n)), shape),
      token_type_ids: new Tensor('int64', BigInt64Array.from(ids.map(() => 0n)), shape)
    })
    await session.release()
    const hidden = output['last_hidden_state']!.data as Float32Array
    const cls = hidden.slice(0, 512)
    const length = Math.sqrt(cls.reduce((sum, x) => sum + x * x, 0))
    const expected = cls.map((x) => x / length)
    const [actual] = await embedder.embedPassages([text])
    expect(dot(actual!, expected)).toBeGreaterThan(0.9999)
  })

  it('a vector has 512 dimensions and norm 1 within 1e-3', async () => {
    const [v] = await embedder.embedPassages(['我是中国人'])
    expect(v!.length).toBe(512)
    expect(Math.abs(Math.sqrt(dot(v!, v!)) - 1)).toBeLessThan(1e-3)
  })

  it('a text longer than the 512-token window is truncated, not rejected', async () => {
    const long = '检索增强生成把相关文档片段交给大模型。'.repeat(120) // ~2300 characters
    const [v] = await embedder.embedPassages([long])
    expect(v!.length).toBe(512)
    expect(Math.abs(Math.sqrt(dot(v!, v!)) - 1)).toBeLessThan(1e-3)
  })

  it('with batches of 1 a vector does not depend on the texts sent with it', async () => {
    const [alone] = await embedder.embedPassages(['我是中国人'])
    const [first] = await embedder.embedPassages(['我是中国人', '一段完全不同而且更长的文字，用来改变批次的内容和长度。'])
    expect(Array.from(first!)).toEqual(Array.from(alone!))
  })

  it('reports its queue: runs waiting, and the expected wait from their number and the mean turn', async () => {
    expect(embedder.backlog()).toEqual({ queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 })
    const runs = Array.from({ length: 12 }, (_, i) => embedder.embedQueries([`排队的问题 ${i}`]))
    // Runs are serialised: once four are done, the fifth runs and seven wait; the turns of runs 2 to 4 are known.
    await Promise.all(runs.slice(0, 4))
    const busy = embedder.backlog()
    expect(busy.queued).toBeGreaterThanOrEqual(7)
    expect(busy.queued).toBeLessThanOrEqual(8)
    expect(busy.oldestWaitMs).toBeGreaterThan(0)
    expect(busy.expectedWaitMs).toBeGreaterThan(0)
    await Promise.all(runs)
    expect(embedder.backlog()).toEqual({ queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 })
  })

  it('concurrent callers each get their own vectors', async () => {
    const texts = ['我是中国人', 'Redis 集群的主从切换', '红烧肉的做法']
    const alone = await Promise.all(texts.map(async (t) => (await embedder.embedPassages([t]))[0]!))
    const again = await Promise.all(texts.map(async (t) => (await embedder.embedPassages([t]))[0]!))
    for (const [i, v] of again.entries()) expect(Array.from(v)).toEqual(Array.from(alone[i]!))
  })
})

describe('LocalEmbedder failures', () => {
  let emptyDir: string

  beforeAll(async () => {
    emptyDir = await mkdtemp(join(tmpdir(), 'recall-no-model-'))
  })

  afterAll(async () => {
    await rm(emptyDir, { recursive: true, force: true })
  })

  it('a missing model folder fails with BackendUnavailableError naming `make model`', async () => {
    const embedder = new LocalEmbedder({ modelDir: emptyDir, modelName: MODEL_NAME })
    const failure = embedder.embedQueries(['你好'])
    await expect(failure).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(failure).rejects.toThrow(/make model/)
    const health = await embedder.health()
    expect(health.ok).toBe(false)
    expect(health.detail).toMatch(/make model/)
    await embedder.close()
  })

  it('after close, calls fail with BackendUnavailableError and health is not ok', async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME })
    await embedder.init()
    await embedder.close()
    await expect(embedder.embedPassages(['你好'])).rejects.toBeInstanceOf(BackendUnavailableError)
    expect((await embedder.health()).ok).toBe(false)
  })

  it('a dimensions setting the model does not have fails at load', async () => {
    const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME, dimensions: 768 })
    await expect(embedder.init()).rejects.toThrow(/hidden_size 512/)
    await embedder.close()
  })
})
