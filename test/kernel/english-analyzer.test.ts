import { describe, expect, it } from 'vitest'
import { ANALYZERS, analyzerTag } from '../../src/kernel/analyzers.js'
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import { analyzeEnglish } from '../../src/kernel/english-analyzer.js'

describe('the English analyzer (cjk-bigram-english)', () => {
  // Pairs from the Snowball English (Porter2) algorithm's published sample vocabulary and its definition.
  it.each([
    ['consign consigned consigning consignment', ['consign', 'consign', 'consign', 'consign']],
    ['generously knightly', ['generous', 'knight']],
    ['running runs ran', ['run', 'run', 'ran']],
    ['activities activity', ['activ', 'activ']]
  ])('stems %s as Porter2 does', (text, stems) => {
    expect(analyzeEnglish(text)).toEqual(stems)
  })

  it('folds case, plurals and inflections of one word onto one token, so a question meets the turn that answers it', () => {
    const turn = new Set(analyzeEnglish('Melanie: I painted a lake sunrise, and the kids loved it!'))
    for (const asked of ['What did Melanie paint?', 'Which paintings did melanie make?', 'sunrises kid']) {
      const words = analyzeEnglish(asked).filter((t) => !['what', 'did', 'which', 'make'].includes(t))
      expect(words.every((t) => turn.has(t)), `${asked} -> ${words.join(' ')}`).toBe(true)
    }
  })

  it("drops a possessive 's (and a word it leaves a stop word), keeps other contractions", () => {
    expect(analyzeEnglish("Caroline's dog, it's John’s")).toEqual(['carolin', 'dog', 'john'])
    expect(analyzeEnglish("don't")).toEqual(["don't"])
  })

  it('leaves CJK bigrams, numbers and mixed tokens as the CJK analyzer gives them', () => {
    const text = '咳嗽三周以上 GPT-4o 3.14 iPhone15 2023'
    expect(analyzeEnglish(text)).toEqual(analyze(text))
  })

  it('still drops the CJK analyzer\'s stop words and keeps two-letter words as they are', () => {
    expect(analyzeEnglish('The cat is on the mat as we go')).toEqual(['cat', 'mat', 'we', 'go'])
  })

  it('has a tag of its own, and the service analyzer keeps its tag', () => {
    expect(analyzerTag('cjk-bigram')).toBe('cjk-bigram@2')
    expect(analyzerTag('cjk-bigram-english')).toBe('cjk-bigram-english@2.1')
    expect(ANALYZERS['cjk-bigram-english']).toBe(analyzeEnglish)
  })
})
