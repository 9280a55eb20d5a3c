import { describe, expect, it } from 'vitest'
import { analyze, ENGLISH_STOP_WORDS } from '../../src/kernel/cjk-analyzer.js'

describe('CJK analyzer (after Lucene CJKAnalyzer)', () => {
  it.each([
    ['我是中国人', ['我是', '是中', '中国', '国人']],
    ['API 流式返回', ['api', '流式', '式返', '返回']],
    ['财务〔2024〕17号', ['财务', '2024', '17', '号']],
    ['GPT-4o', ['gpt', '4o']]
  ])('the design examples: %s', (text, tokens) => {
    expect(analyze(text)).toEqual(tokens)
  })

  it('folds full-width forms with NFKC and lowercases', () => {
    expect(analyze('ＡＰＩ１７')).toEqual(['api17'])
    expect(analyze('Ｋａｆｋａ')).toEqual(['kafka'])
  })

  it('keeps letters with digits as one token and splits on hyphens', () => {
    expect(analyze('iPhone15 和 GPT-4o-mini')).toEqual(['iphone15', '和', 'gpt', '4o', 'mini'])
  })

  it('makes a lone CJK character a unigram and breaks bigrams at spaces, punctuation and Latin', () => {
    expect(analyze('咳 嗽')).toEqual(['咳', '嗽'])
    expect(analyze('血压，心率')).toEqual(['血压', '心率'])
    expect(analyze('用Redis缓存')).toEqual(['用', 'redis', '缓存'])
  })

  it('bigrams across the four CJK scripts', () => {
    expect(analyze('カタカナ')).toEqual(['カタ', 'タカ', 'カナ'])
    expect(analyze('ひらがな')).toEqual(['ひら', 'らが', 'がな'])
    expect(analyze('한국어')).toEqual(['한국', '국어'])
    expect(analyze('日本のアニメ')).toEqual(['日本', '本の', 'のア', 'アニ', 'ニメ'])
  })

  it('drops exactly Lucene\'s 35 English stop words', () => {
    expect(ENGLISH_STOP_WORDS.size).toBe(35)
    expect(analyze('The cause of the fever is not known')).toEqual(['cause', 'fever', 'known'])
    expect(analyze('www and with will')).toEqual([])
  })

  it('keeps decimal numbers whole', () => {
    expect(analyze('体温 38.5 度')).toEqual(['体温', '38.5', '度'])
  })

  it('gives no token for punctuation only or empty text', () => {
    expect(analyze('？！…、。')).toEqual([])
    expect(analyze('')).toEqual([])
  })

  // The expectations below follow Lucene's rules (NOTES.md) and were checked against Lucene 9.12.3's
  // CJKAnalyzer itself (`analyze` in bench/lucene/LuceneBench.java); where recall differs on purpose the test
  // says so. ー is Katakana for the tokenizer, so it stays inside the run; half-width katakana fold first.
  it('keeps the prolonged sound mark ー (and half-width ｰ) inside a katakana run', () => {
    expect(analyze('コーヒー')).toEqual(['コー', 'ーヒ', 'ヒー'])
    expect(analyze('ｺｰﾋｰ')).toEqual(['コー', 'ーヒ', 'ヒー'])
    expect(analyze('ラーメン屋')).toEqual(['ラー', 'ーメ', 'メン', 'ン屋'])
  })

  it('never emits a token without a letter or digit', () => {
    expect(analyze('_____')).toEqual([])
    expect(analyze('\uFE0F')).toEqual([])
    expect(analyze('a_b foo_bar __x')).toEqual(['a_b', 'foo_bar', '__x'])
  })

  it('gives no token for text of symbols or emoji only (a deliberate difference: Lucene 9 emits 😀 and ★)', () => {
    expect(analyze('😀👍🏽❤️ ★☆ →')).toEqual([])
  })

  it('lowercases per character, as Java does', () => {
    expect(analyze('İstanbul')).toEqual(['istanbul'])
    expect(analyze('ΟΔΟΣ')).toEqual(['οδοσ'])
  })

  it('does not turn unit symbols into letters: 30℃ has no c token that would match 维生素C', () => {
    expect(analyze('30℃')).toEqual(['30'])
    expect(analyze('维生素C')).toEqual(['维生', '生素', 'c'])
    expect(analyze('Windows™ 5㎏')).toEqual(['windows', '5']) // Lucene also emits ™ (an emoji-class symbol)
  })

  // ㎡ as Lucene (no token); km² and CO₂ differ on purpose (Lucene: km, co): folded digits let CO₂ match CO2.
  it('decides ㎡, km² and CO₂ on purpose: a symbol gives no token, superscript and subscript digits fold', () => {
    expect(analyze('100㎡')).toEqual(['100'])
    expect(analyze('面积100㎡')).toEqual(['面积', '100'])
    expect(analyze('10km²')).toEqual(['10km2'])
    expect(analyze('km² km2')).toEqual(['km2', 'km2'])
    expect(analyze('CO₂排放')).toEqual(['co2', '排放'])
  })

  it('keeps the deliberate differences from Lucene', () => {
    expect(analyze('www.example.com')).toEqual(['example', 'com'])
    expect(analyze('Re:Hello')).toEqual(['re', 'hello'])
    expect(analyze('don’t')).toEqual(["don't"])
    expect(analyze('한국어abc')).toEqual(['한국', '국어', 'abc'])
  })
})
