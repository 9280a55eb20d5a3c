import { describe, expect, it } from 'vitest'
import { buildNameMatcher } from '../../../adapters/graphrag/match.js'
import { normalizeForMatch } from '../../../src/kernel/entity-names.js'

const e = (id: string, name: string, aliases: string[] = []) => ({ id, name, aliases })

describe('normalizeForMatch', () => {
  it('folds full-width forms (NFKC) and lowercases Latin letters only', () => {
    expect(normalizeForMatch('ＡＰＩ　网关')).toBe('api 网关')
    expect(normalizeForMatch('Ünïcode ÀB')).toBe('ünïcode àb')
    // Greek and Cyrillic keep their case: docs/api.md ("Graphrag in detail") says case-insensitive for Latin.
    expect(normalizeForMatch('ΑΒΓ Москва')).toBe('ΑΒΓ Москва')
    expect(normalizeForMatch('㍿')).toBe('株式会社')
  })
})

describe('buildNameMatcher', () => {
  it('finds every name and alias that occurs, by first occurrence', () => {
    const m = buildNameMatcher([e('c', '北京'), e('s', '上海'), e('p', '北京大学', ['北大']), e('q', '清华大学', ['清华'])])
    expect(m.match('上海和清华').map((x) => [x.entityId, x.matchedBy, x.position])).toEqual([
      ['s', 'name', 0],
      ['q', 'alias', 3]
    ])
  })

  it('keeps the longest where occurrences overlap: 北京大学 beats 北京', () => {
    const m = buildNameMatcher([e('c', '北京'), e('p', '北京大学'), e('d', '大学')])
    expect(m.match('北京大学在哪').map((x) => x.entityId)).toEqual(['p'])
    // Elsewhere in the question the shorter name still counts.
    expect(m.match('北京大学在北京').map((x) => [x.entityId, x.position])).toEqual([
      ['p', 0],
      ['c', 5]
    ])
  })

  it('overlapping matches of equal length: the leftmost wins', () => {
    const m = buildNameMatcher([e('ab', '甲乙'), e('bc', '乙丙')])
    expect(m.match('甲乙丙').map((x) => x.entityId)).toEqual(['ab'])
  })

  it('a long match blocks the overlapping shorter ones on both sides', () => {
    // 中国人民 (4) covers 中国 and 人民 and overlaps 民银 (3..5); 银行 (5..7) stays free.
    const m = buildNameMatcher([e('a', '中国'), e('b', '人民'), e('c', '中国人民'), e('d', '民银'), e('f', '银行')])
    expect(m.match('中国人民银行').map((x) => x.entityId)).toEqual(['c', 'f'])
  })

  it('is case-insensitive for Latin and folds full-width input', () => {
    const m = buildNameMatcher([e('k', 'Kafka'), e('api', 'API Gateway', ['ＡＰＩ网关'])])
    expect(m.match('how does KAFKA work').map((x) => x.entityId)).toEqual(['k'])
    expect(m.match('ａｐｉ gateway 超时').map((x) => [x.entityId, x.matchedBy])).toEqual([['api', 'name']])
    expect(m.match('api网关超时').map((x) => [x.entityId, x.matchedBy])).toEqual([['api', 'alias']])
  })

  it('a Latin or digit name matches whole words only', () => {
    const m = buildNameMatcher([e('go', 'Go'), e('g4', 'GPT-4')])
    expect(m.match('google it')).toEqual([])
    expect(m.match('ago')).toEqual([])
    expect(m.match('用Go写').map((x) => x.entityId)).toEqual(['go'])
    expect(m.match('go, then GPT-4o').map((x) => x.entityId)).toEqual(['go'])
    expect(m.match('GPT-4 and go').map((x) => x.entityId)).toEqual(['g4', 'go'])
  })

  it('several entities sharing a name all match; an entity matched twice counts once, as name if ever', () => {
    const m = buildNameMatcher([e('x1', '苹果'), e('x2', '苹果', ['Apple']), e('y', '香蕉', ['苹果'])])
    expect(m.match('apple 和 苹果').map((x) => [x.entityId, x.matchedBy, x.position])).toEqual([
      ['x2', 'name', 0],
      ['x1', 'name', 8],
      ['y', 'alias', 8]
    ])
  })

  it('finds names inside one another and at the very ends (failure links)', () => {
    const m = buildNameMatcher([e('he', 'he'), e('she', 'she'), e('his', 'his'), e('hers', 'hers'), e('cjk', '阿里巴巴')])
    expect(m.match('ushers').map((x) => x.entityId)).toEqual([])
    expect(m.match('u she rs hers his').map((x) => x.entityId)).toEqual(['she', 'hers', 'his'])
    expect(m.match('阿里阿里巴巴').map((x) => [x.entityId, x.position])).toEqual([['cjk', 2]])
  })

  it('treats quotes, backslashes, braces and Cypher as plain characters', () => {
    const names = [`x"}) DETACH DELETE n //`, "a'b\\c", '{name: $id}', 'MATCH (n) RETURN n']
    const m = buildNameMatcher(names.map((n, i) => e(`h${i}`, n)))
    expect(m.match(`q: x"}) DETACH DELETE n // and a'b\\c`).map((x) => x.entityId)).toEqual(['h0', 'h1'])
    expect(m.match('{name: $id} match (n) return n').map((x) => x.entityId)).toEqual(['h2', 'h3'])
  })

  it('an empty graph or empty names match nothing', () => {
    expect(buildNameMatcher([]).match('北京')).toEqual([])
    expect(buildNameMatcher([e('z', '  ', [''])]).match('  ')).toEqual([])
    expect(buildNameMatcher([]).entities).toBe(0)
  })
})
