import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { deriveDocument } from '../../src/derive/document.js'
import { latinTerms } from '../../src/derive/latin.js'
import { markedTerms } from '../../src/derive/marks.js'
import { nameKey } from '../../src/derive/normalise.js'
import { derivationOptions } from '../../src/derive/options.js'

// the example (#31): expected entities and relations written by hand from its wording
const EXAMPLE = '鉴权中间件由平台组负责维护，左氧氟沙星禁用于18岁以下儿童'
const NAMES = ['鉴权中间件', '平台组', '左氧氟沙星']
/** A co-occurrence reads the same either way: from the smaller key to the larger. */
const cooccurs = (a: string, b: string) => (a < b ? `${a} -co_occurs-> ${b}` : `${b} -co_occurs-> ${a}`)
const EXPECTED_RELATIONS = [
  '平台组 -负责-> 鉴权中间件', // `A 由 B 负责`: B is responsible for A
  '左氧氟沙星 -禁用-> 儿童',
  // across the comma, no verb types a pair
  cooccurs('鉴权中间件', '左氧氟沙星'), cooccurs('鉴权中间件', '儿童'), cooccurs('平台组', '左氧氟沙星'), cooccurs('平台组', '儿童')
].sort()

const lines = (r: ReturnType<typeof deriveDocument>) => r.relations.map((x) => `${x.source} -${x.type}-> ${x.target}`).sort()
const keys = (r: ReturnType<typeof deriveDocument>) => r.entities.map((e) => e.key).sort()

describe('deriveDocument on the issue example', () => {
  it('jieba alone takes the three names apart', () => {
    const derived = deriveDocument([{ id: 'x#0', text: EXAMPLE }], derivationOptions())
    for (const name of NAMES) expect(keys(derived)).not.toContain(name)
  })

  it('with a user dictionary: the three whole names, 儿童, and the relations typed by 负责 and 禁用', () => {
    const derived = deriveDocument([{ id: 'x#0', text: EXAMPLE }], derivationOptions({ userDictionary: NAMES }))
    expect(keys(derived)).toEqual(['儿童', '左氧氟沙星', '平台组', '鉴权中间件'].sort())
    expect(lines(derived)).toEqual(EXPECTED_RELATIONS)
    for (const e of derived.entities) expect(e.chunk_ids).toEqual(['x#0'])
    for (const r of derived.relations) expect([r.chunk_ids, r.count]).toEqual([['x#0'], 1])
  })

  it('without a dictionary, when the document marks the names (heading, bold, link): the same graph', () => {
    const text = `# 鉴权中间件\n\n平台组见 **平台组** 页面，药品见 [左氧氟沙星](drugs/levofloxacin.md) 说明书。\n\n${EXAMPLE}。`
    const derived = deriveDocument([{ id: 'm#0', text }], derivationOptions())
    for (const name of NAMES) expect(keys(derived)).toContain(name)
    const example = deriveDocument([{ id: 'm#0', text }], derivationOptions())
    expect(lines(example)).toEqual(expect.arrayContaining(EXPECTED_RELATIONS))
  })

  it('weights a relation by the sentences that state it, and keeps every chunk that states it', () => {
    const options = derivationOptions({ userDictionary: NAMES })
    const derived = deriveDocument([
      { id: 'd#0', text: `${EXAMPLE}。${EXAMPLE}。` },
      { id: 'd#1', text: '鉴权中间件由平台组负责。' }
    ], options)
    const responsible = derived.relations.find((r) => r.type === '负责')!
    expect(responsible).toEqual({ source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['d#0', 'd#1'], count: 3 })
    expect(derived.entities.find((e) => e.key === '鉴权中间件')).toMatchObject({ chunk_ids: ['d#0', 'd#1'], mentions: 3 })
  })
})

describe('what the text marks', () => {
  it('finds API paths, identifiers and model numbers whole', () => {
    const text = '调用 /v1/chat/completions 接口，模型为 GPT-4o 或 Qwen2.5-14B，签名 RS256，配置 redis.conf 与 max_tokens。'
    expect(latinTerms(text).map((s) => s.text)).toEqual(['/v1/chat/completions', 'GPT-4o', 'Qwen2.5-14B', 'RS256', 'redis.conf', 'max_tokens'])
  })

  it('takes heading parts (numbering and leading particles off), bold, emphasis, code and link texts', () => {
    const md = '## 四、与 v2 的差异\n\n见 **灰度发布**、*熔断*、`qh-auth` 和 [问诊网关](gw.md)。'
    expect(markedTerms(md, 24)).toEqual(['v2', '差异', '灰度发布', '熔断', 'qh-auth', '问诊网关'])
  })

  it('merges names by NFKC and case', () => {
    expect(nameKey('ＧＰＴ-4O')).toBe('gpt-4o')
    expect(nameKey(' Redis  Cluster ')).toBe('redis cluster')
  })
})

describe('deriveDocument on a demo document (demo/documents/engineering/auth-middleware.md)', () => {
  const text = readFileSync(new URL('../../demo/documents/engineering/auth-middleware.md', import.meta.url), 'utf8')
  const chunks = chunkDocument({ id: 'auth-middleware', text })
  const derived = deriveDocument(chunks, derivationOptions())
  const entity = (key: string) => derived.entities.find((e) => e.key === key)

  it('finds 鉴权中间件 whole through its title, in the chunks that name it, described by its defining sentence', () => {
    expect(entity('鉴权中间件')).toMatchObject({
      name: '鉴权中间件',
      chunk_ids: ['auth-middleware#0', 'auth-middleware#1', 'auth-middleware#5'],
      description: '鉴权中间件（qh-auth，英文文档中称 auth middleware）是问诊网关和各后端服务共用的身份校验组件，由安全组组长李婉清负责。'
    })
  })

  it('keeps the Latin-script terms of the text as terms', () => {
    for (const key of ['qh-auth', 'jwt', 'rs256', 'hs256', 'jwks', 'redis', 'p99']) expect(entity(key)?.type).toBe('术语')
  })

  it('types the relation of `v2 使用 HS256 共享密钥` by its verb', () => {
    expect(derived.relations.find((r) => r.source === 'v2' && r.target === 'hs256')).toMatchObject({ type: '使用', chunk_ids: ['auth-middleware#4'] })
  })

  it('gives each entity exactly the chunks whose text names it', () => {
    for (const e of derived.entities) {
      const naming = chunks.filter((c) => c.text.normalize('NFKC').toLowerCase().includes(e.key)).map((c) => c.id)
      expect(naming, e.key).toEqual(expect.arrayContaining(e.chunk_ids))
    }
  })

  it('is deterministic and keeps no state between documents', () => {
    const other = chunkDocument({ id: 'llm-proxy', text: readFileSync(new URL('../../demo/documents/engineering/llm-proxy.md', import.meta.url), 'utf8') })
    deriveDocument(other, derivationOptions({ userDictionary: ['问诊网关'] }))
    expect(JSON.stringify(deriveDocument(chunks, derivationOptions()))).toBe(JSON.stringify(derived))
  })
})
