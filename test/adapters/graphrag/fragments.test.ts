/**
 * Names a question holds only in part (adapters/graphrag/fragments.ts). Expected hits are worked out by hand from the
 * rule: the question's longest pieces (3..6 characters of a CJK run, or a Latin word of 3 or more) found inside longer
 * names, not strictly inside a name the question holds in full, held by at most 3 names, covering at least half a name.
 */
import { describe, expect, it } from 'vitest'
import { buildFragmentIndex, DEFAULT_FRAGMENT_OPTIONS } from '../../../adapters/graphrag/fragments.js'
import { buildNameMatcher } from '../../../adapters/graphrag/match.js'

const hits = (keys: string[], text: string, named: Array<{ start: number; end: number }> = []) =>
  buildFragmentIndex(keys).lookup(text, named).map((h) => [keys[h.key], h.fragment, h.position, Math.round(h.share * 1000) / 1000])

describe('buildFragmentIndex', () => {
  it('流式返回 of the question falls inside 流式返回接口 (4 of its 6 characters); 流式 itself, named in full, is not looked at', () => {
    expect(hits(['流式', '流式返回接口'], '流式返回出问题怎么回滚', [{ start: 0, end: 2 }])).toEqual([['流式返回接口', '流式返回', 0, 0.667]])
  })

  it('only the longest piece counts: 令牌 inside the found 访问令牌 does not point at 令牌桶', () => {
    expect(hits(['访问令牌有效期', '令牌桶'], '访问令牌多久过期')).toEqual([['访问令牌有效期', '访问令牌', 0, 0.571]])
  })

  it('a piece of more than maxNames names points at none', () => {
    expect(DEFAULT_FRAGMENT_OPTIONS.maxNames).toBe(3)
    expect(hits(['支付接口文档', '支付接口测试', '支付接口规范', '支付接口地址'], '支付接口在哪')).toEqual([])
    expect(hits(['支付接口文档', '支付接口测试', '支付接口规范'], '支付接口在哪')).toEqual([
      ['支付接口文档', '支付接口', 0, 0.667], ['支付接口测试', '支付接口', 0, 0.667], ['支付接口规范', '支付接口', 0, 0.667]
    ])
  })

  it('a piece shorter than minGram (3) is not looked at: 手机 of 安卓手机 says nothing of 手机号', () => {
    expect(DEFAULT_FRAGMENT_OPTIONS.minGram).toBe(3)
    expect(hits(['手机号'], '安卓手机')).toEqual([])
    const two = buildFragmentIndex(['手机号'], { ...DEFAULT_FRAGMENT_OPTIONS, minGram: 2 })
    expect(two.lookup('安卓手机').map((h) => [h.key, h.fragment, h.position])).toEqual([[0, '手机', 2]])
  })

  it('a name the fragment covers less than half of is left out', () => {
    expect(DEFAULT_FRAGMENT_OPTIONS.minShare).toBe(0.5)
    expect(hits(['流式返回接口服务端'], '流式返回')).toEqual([])
  })

  it('a piece strictly inside a name the question holds in full is part of that name; the name itself is looked up', () => {
    // 中国人民大学 named at 0..6: its piece 人民大学 is not looked at, so 人民大学堂 is not reached
    expect(hits(['中国人民大学', '人民大学堂'], '中国人民大学在哪', [{ start: 0, end: 6 }])).toEqual([])
    // not named in full: 人民大学 is 4 of 中国人民大学's 6 characters and of 人民大学堂's 5
    expect(hits(['中国人民大学', '人民大学堂'], '人民大学在哪')).toEqual([['中国人民大学', '人民大学', 0, 0.667], ['人民大学堂', '人民大学', 0, 0.8]])
  })

  it('a Latin word of the question falls inside a name holding it as a word', () => {
    // promise.all: 11 characters, promise 7
    expect(hits(['promise.all', 'compromise'], 'promise 怎么用')).toEqual([['promise.all', 'promise', 0, 0.636]])
  })
})

describe('buildNameMatcher with fragments', () => {
  const e = (id: string, name: string, aliases: string[] = []) => ({ id, name, aliases })

  it('names in full first, then those held in part, with the share', () => {
    const m = buildNameMatcher([e('s', '流式'), e('api', '流式返回接口'), e('rb', '回滚')], DEFAULT_FRAGMENT_OPTIONS)
    expect(m.match('流式返回出问题怎么回滚').map((x) => [x.entityId, x.matchedBy, x.position, x.key, Math.round(x.share * 1000) / 1000])).toEqual([
      ['s', 'name', 0, '流式', 1],
      ['rb', 'name', 9, '回滚', 1],
      ['api', 'partial', 0, '流式返回接口', 0.667]
    ])
    // without fragment options, names in full only
    expect(buildNameMatcher([e('s', '流式'), e('api', '流式返回接口')]).match('流式返回出问题').map((x) => x.entityId)).toEqual(['s'])
  })

  it('an entity named in full is not also a partial match', () => {
    const m = buildNameMatcher([e('p', '北京大学', ['北大']), e('q', '北京大学医学部')], DEFAULT_FRAGMENT_OPTIONS)
    // 北京大学 (4 of 7) points at q; p is named in full
    expect(m.match('北京大学在哪').map((x) => [x.entityId, x.matchedBy])).toEqual([['p', 'name'], ['q', 'partial']])
  })
})
