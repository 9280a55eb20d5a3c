import { describe, expect, it } from 'vitest'
import { deriveDocument, type DerivationChunk } from '../../src/derive/document.js'
import { derivationOptions } from '../../src/derive/options.js'

// Hand-written documents; what each must give is read off the text (counts and neighbours in the comments).
// 鉴权中间件 3 times (left: sentence start, 过, 级; right: 由, ，, 之); 左氧氟沙星 3 times (left: start, 具, start;
// right: 禁, 时, 的); 平台组 only twice. No other run of two or more characters repeats.
const TWO_TERMS: DerivationChunk[] = [
  { id: 'a#0', text: '鉴权中间件由平台组负责维护。所有请求先经过鉴权中间件，再进入业务服务。升级鉴权中间件之前要通知平台组。' },
  { id: 'a#1', text: '左氧氟沙星禁用于18岁以下儿童。医生开具左氧氟沙星时核对年龄。左氧氟沙星的常见不良反应是胃肠不适。' }
]
// 的鉴权 3 times in different contexts (left: 版, 版, 关; right: 流, 规, 配), 鉴权 never without 的 before it
const GLUED: DerivationChunk[] = [{ id: 'g#0', text: '新版的鉴权流程更简单。旧版的鉴权规则已废弃。网关的鉴权配置在这里。' }]
// 鉴权中间件 twice only
const TWICE: DerivationChunk[] = [{ id: 't#0', text: '所有请求先经过鉴权中间件，再进入业务服务。升级鉴权中间件之前要通知运维。' }]

const keys = (chunks: readonly DerivationChunk[], overrides: Parameters<typeof derivationOptions>[0] = {}) =>
  deriveDocument(chunks, derivationOptions(overrides)).entities.map((e) => e.key)

describe('frequent cohesive n-grams of a document', () => {
  it('keeps 鉴权中间件 and 左氧氟沙星 whole without a dictionary (jieba alone splits them: 鉴/权, 左/氧氟沙星)', () => {
    const derived = deriveDocument(TWO_TERMS, derivationOptions())
    expect(derived.entities.find((e) => e.key === '鉴权中间件')).toMatchObject({ chunk_ids: ['a#0'], mentions: 3 })
    expect(derived.entities.find((e) => e.key === '左氧氟沙星')).toMatchObject({ chunk_ids: ['a#1'], mentions: 3 })
    expect(derived.relations).toContainEqual(expect.objectContaining({ source: '左氧氟沙星', type: '禁用', target: '儿童' }))
  })

  it('takes none with ngramMinCount 0 (off): jieba splits both names', () => {
    const off = keys(TWO_TERMS, { ngramMinCount: 0 })
    expect(off).not.toContain('鉴权中间件')
    expect(off).not.toContain('左氧氟沙星')
  })

  it('does not take a phrase the document repeats only twice', () => {
    expect(keys(TWO_TERMS)).not.toContain('平台组')
    expect(keys(TWICE)).not.toContain('鉴权中间件')
    // the same text with the threshold at 2 takes it: the count is what leaves it out
    expect(keys(TWICE, { ngramMinCount: 2 })).toContain('鉴权中间件')
  })

  it('does not take a repeated run that starts with a function word (的鉴权)', () => {
    expect(keys(GLUED)).not.toContain('的鉴权')
    // without the stop lists it would be taken: they are what leave it out
    expect(keys(GLUED, { ngramEdgeStops: [], ngramInnerStops: [] })).toContain('的鉴权')
  })

  it('does not take a phrase joined by 和 (属性和方法), nor a run that ends inside jieba\'s words (数组结 of 数组/结尾)', () => {
    // 属性和方法 3 times (left: start, 的, 有; right: 都, 。, 放); 数组结 3 times (right: 尾, 构, 果), each time inside
    // jieba's words 数组/结尾, 数组/结构, 数组/结果
    const chunks: DerivationChunk[] = [{ id: 'p#0', text: '属性和方法都写在类里。类的属性和方法。子类也有属性和方法放在原型上。把元素放到数组结尾。先看数组结构。打印数组结果即可。' }]
    expect(keys(chunks)).not.toContain('属性和方法')
    expect(keys(chunks, { ngramInnerStops: [] })).toContain('属性和方法')
    expect(keys(chunks)).not.toContain('数组结')
  })

  it('does not take a part of a kept n-gram that never occurs alone', () => {
    const derived = keys(TWO_TERMS)
    for (const part of ['鉴权中间', '权中间件', '中间件', '鉴权', '左氧氟沙', '氧氟沙星', '氟沙星']) expect(derived).not.toContain(part)
  })

  it('gives way to a user term that overlaps it: the user dictionary is matched first', () => {
    const withUser = keys(TWO_TERMS, { userDictionary: ['氧氟沙星'] })
    expect(withUser).toContain('氧氟沙星')
    expect(withUser).not.toContain('左氧氟沙星')
    expect(withUser).toContain('鉴权中间件')
  })

  it('gives the same output for copies of the same chunks, whatever other documents were derived before', () => {
    const first = JSON.stringify(deriveDocument(TWO_TERMS, derivationOptions()))
    // TWICE holds 鉴权中间件 twice: with counts shared across documents it would reach the threshold
    expect(keys(TWICE)).not.toContain('鉴权中间件')
    deriveDocument(GLUED, derivationOptions())
    expect(JSON.stringify(deriveDocument(structuredClone(TWO_TERMS), derivationOptions()))).toBe(first)
    expect(keys(TWICE)).not.toContain('鉴权中间件')
  })
})
