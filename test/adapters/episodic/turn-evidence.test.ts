/**
 * Turn-level evidence of conversation sessions (adapters/episodic/turn-evidence.ts), on a pool of three turns whose
 * scores are worked out by hand from the BM25 formula (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5))):
 * A "red apple" (2 tokens), B "green apple pie" (3), C "blue sky" (2); average length 7/3; the question "apple pie".
 *   idf(apple) = ln(1 + 1.5/2.5) = ln 1.6; idf(pie) = ln(1 + 2.5/1.5) = ln(8/3)
 *   A: ln 1.6 * 2.2 / (1 + 1.2 (0.25 + 0.75 * 2 / (7/3))) = 0.499176
 *   B: (ln 1.6 + ln(8/3)) * 2.2 / (1 + 1.2 (0.25 + 0.75 * 3 / (7/3))) = 1.299002
 * Cosines A 0.9, B 0.5, C 0.7 normalise to 1, 0, 0.5; BM25 to 0.384277, 1, 0; half each: A 0.692138, B 0.5, C 0.25.
 */
import { describe, expect, it } from 'vitest'
import { bm25Scores, rescoreSessions, scoreTurns, sessionTimePenalty, timeOverlap, turnsInContext, type PooledTurn } from '../../../adapters/episodic/turn-evidence.js'
import type { EpisodeBundle } from '../../../adapters/episodic/types.js'

const pool: PooledTurn[] = [
  { point: 'c/s1/t/A', episode: 'c/s1', text: 'red apple', similarity: 0.9 },
  { point: 'c/s1/t/B', episode: 'c/s1', text: 'green apple pie', similarity: 0.5 },
  { point: 'c/s2/t/C', episode: 'c/s2', text: 'blue sky', similarity: 0.7 }
]
const settings = { vectorWeight: 0.5, timeWeight: 0.1, cited: 2, neighbourWeight: 0.5, sessionWeight: 0 }

describe('turn evidence', () => {
  it('scores BM25 over the pooled turns as the formula gives', () => {
    const [a, b, c] = bm25Scores('apple pie', pool.map((t) => t.text), 'cjk-bigram')
    expect(a).toBeCloseTo(0.499176, 5)
    expect(b).toBeCloseTo(1.299002, 5)
    expect(c).toBe(0)
  })

  it('stems with the English analyzer: "apples" finds "apple"', () => {
    expect(bm25Scores('apples', ['an apple', 'a pear', 'a plum'], 'cjk-bigram-english')[0]).toBeGreaterThan(0)
    expect(bm25Scores('apples', ['an apple', 'a pear', 'a plum'], 'cjk-bigram')[0]).toBe(0)
  })

  it('combines the normalised cosine and BM25 half and half; each session keeps its best turn; the 2nd best is the threshold', () => {
    const scored = scoreTurns(pool, 'apple pie', 'cjk-bigram', settings)
    expect(scored.score.get('c/s1/t/A')).toBeCloseTo(0.692138, 5)
    expect(scored.score.get('c/s1/t/B')).toBeCloseTo(0.5, 5)
    expect(scored.score.get('c/s2/t/C')).toBeCloseTo(0.25, 5)
    expect(scored.best.get('c/s1')?.point).toBe('c/s1/t/A')
    expect(scored.best.get('c/s2')?.point).toBe('c/s2/t/C')
    expect(scored.threshold).toBeCloseTo(0.5, 5)
  })

  it('costs a session 1 - its best turn, adds the sessions the projection missed, and leaves other Episodes alone', () => {
    const scored = scoreTurns(pool, 'apple pie', 'cjk-bigram', settings)
    const other: EpisodeBundle = { episode_id: 'doc-episode', score: 0.4, best_path: 'facet', best_support_id: 'f', best_facet_id: 'f', best_point_id: null, best_entity_id: null }
    const projected: EpisodeBundle = { ...other, episode_id: 'c/s2', score: 0.1 }
    const out = rescoreSessions([other, projected], scored, 'c/')
    expect(out.find((b) => b.episode_id === 'doc-episode')).toEqual(other)
    expect(out.find((b) => b.episode_id === 'c/s2')).toMatchObject({ best_path: 'point', best_point_id: 'c/s2/t/C' })
    expect(out.find((b) => b.episode_id === 'c/s2')!.score).toBeCloseTo(0.75, 5)
    expect(out.find((b) => b.episode_id === 'c/s1')!.score).toBeCloseTo(1 - 0.692138, 5)
  })

  it('in context a turn gains half its better neighbour; a question time covering a turn adds the time weight', () => {
    const scored = scoreTurns(pool, 'apple pie', 'cjk-bigram', settings)
    const day = 86_400_000
    const turns = [
      { point: 'c/s1/t/A', time_ms: Date.UTC(2023, 4, 8, 13) },
      { point: 'c/s1/t/B', time_ms: Date.UTC(2023, 4, 8, 13), mentioned: { text: 'yesterday', start_ms: Date.UTC(2023, 4, 7), end_ms: Date.UTC(2023, 4, 7) + day, confidence: 0.9 } }
    ]
    const plain = turnsInContext([turns], scored, settings)
    expect(plain.score.get('c/s1/t/A')).toBeCloseTo(0.692138 + 0.25, 5)
    expect(plain.score.get('c/s1/t/B')).toBeCloseTo(0.5 + 0.346069, 5)
    // 7 May 2023: B's "yesterday" is that day, A was said on the 8th
    const dated = turnsInContext([turns], scored, settings, { start_ms: Date.UTC(2023, 4, 7), end_ms: Date.UTC(2023, 4, 7) + day })
    expect(dated.score.get('c/s1/t/A')).toBeCloseTo(0.942138, 5)
    expect(dated.score.get('c/s1/t/B')).toBeCloseTo(0.946069, 5)
    expect(dated.threshold).toBeCloseTo(0.942138, 5)
    // and 0.2 of the session's best (A, 0.692138) to each turn of it
    const withSession = turnsInContext([turns], scored, { ...settings, sessionWeight: 0.2 })
    expect(withSession.score.get('c/s1/t/A')).toBeCloseTo(0.942138 + 0.138428, 5)
    expect(withSession.score.get('c/s1/t/B')).toBeCloseTo(0.846069 + 0.138428, 5)
  })

  it('adds the time weight to the cost of a session whose mentioned time misses the question\'s, nothing without a question time', () => {
    const session = { mentioned_time_start_ms: Date.UTC(2023, 4, 6), mentioned_time_end_ms: Date.UTC(2023, 4, 9) }
    expect(sessionTimePenalty(session, { start_ms: Date.UTC(2023, 4, 8), end_ms: Date.UTC(2023, 4, 10) }, 1)).toBe(0)
    expect(sessionTimePenalty(session, { start_ms: Date.UTC(2023, 4, 9), end_ms: Date.UTC(2023, 4, 10) }, 1)).toBe(1)
    expect(sessionTimePenalty(undefined, { start_ms: 0, end_ms: 1 }, 1)).toBe(1)
    expect(sessionTimePenalty(session, null, 1)).toBe(0)
    const scored = scoreTurns(pool, 'apple pie', 'cjk-bigram', settings)
    const out = rescoreSessions([], scored, 'c/', (episode) => (episode === 'c/s2' ? 1 : 0))
    expect(out.find((b) => b.episode_id === 'c/s2')!.score).toBeCloseTo(1.75, 5)
  })

  it('measures how much of a turn\'s day a range covers', () => {
    const day = 86_400_000
    const turn = { time_ms: Date.UTC(2023, 4, 8, 13, 56) }
    expect(timeOverlap(turn, { start_ms: Date.UTC(2023, 4, 1), end_ms: Date.UTC(2023, 5, 1) })).toBe(1)
    expect(timeOverlap(turn, { start_ms: Date.UTC(2023, 4, 8, 12), end_ms: Date.UTC(2023, 4, 9) })).toBeCloseTo(0.5, 9)
    expect(timeOverlap(turn, { start_ms: Date.UTC(2023, 4, 9), end_ms: Date.UTC(2023, 4, 9) + day })).toBe(0)
    expect(timeOverlap(turn, null)).toBe(0)
  })
})
