import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEmbedder } from '../../src/providers/embedder/index.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'

// The real English model, fetched by `npm run model` (`make setup`); the test fails rather than skips without it.
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const MODEL_NAME = 'bge-small-en-v1.5'
// As the model card (BAAI/bge-small-en-v1.5, "Using FlagEmbedding") states it, written out here so a wrong constant in src fails.
const QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: '

const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * (b[i] ?? Number.NaN), 0)

describe('English model folder', () => {
  it(`${MODEL_DIR}/${MODEL_NAME} exists (run \`npm run model\` first)`, () => {
    expect(existsSync(join(MODEL_DIR, MODEL_NAME, 'onnx', 'model_quantized.onnx'))).toBe(true)
  })
})

describeEmbedderContract(
  'local bge-small-en-v1.5',
  async () => createEmbedder({ backend: 'local', modelDir: MODEL_DIR, modelName: MODEL_NAME }),
  { dimensions: 384, queryInstruction: QUERY_INSTRUCTION }
)

describe('LocalEmbedder with bge-small-en-v1.5', () => {
  const embedder = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: MODEL_NAME })

  beforeAll(async () => {
    await embedder.init()
  })

  afterAll(async () => {
    await embedder.close()
  })

  // Hand-written: [sentence, a paraphrase sharing few words with it, an unrelated sentence].
  const triples: Array<[string, string, string]> = [
    ['I adopted a puppy from the shelter last weekend.', 'We brought home a young dog from the animal rescue on Saturday.', 'The quarterly tax filing deadline is next month.'],
    ['How do I reset my account password?', 'I forgot my login credentials, how can I recover them?', 'Heavy rain is expected in Boston tomorrow.'],
    ['She has been painting landscapes since she was a child.', 'Making pictures of scenery is a hobby she picked up in her early years.', 'The train to Chicago was delayed by two hours.']
  ]

  it.each(triples)('%s: its paraphrase is closer than an unrelated sentence', async (sentence, paraphrase, unrelated) => {
    const [s, p, u] = await embedder.embedPassages([sentence, paraphrase, unrelated])
    expect(dot(s!, p!)).toBeGreaterThan(dot(s!, u!))
    expect(dot(s!, p!)).toBeGreaterThan(dot(p!, u!))
  })

  it('a question finds the turn that answers it before unrelated turns', async () => {
    const [query] = await embedder.embedQueries(['When did Caroline go to the support group?'])
    const passages = await embedder.embedPassages([
      'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.',
      'Melanie: I painted a lake sunrise last year, it is special to me.',
      'The stock market closed two percent higher on Friday.'
    ])
    const sims = passages.map((p) => dot(query!, p))
    expect(sims[0]).toBeGreaterThan(sims[1]!)
    expect(sims[0]).toBeGreaterThan(sims[2]!)
  })
})
