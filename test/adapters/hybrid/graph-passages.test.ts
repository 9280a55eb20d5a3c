/**
 * The graph leg's passages (adapters/hybrid/graph-passages.ts): a chunk scores the sum of the weights its entity
 * paths give it. Expected values by hand: a named entity's chunks weigh 1, 1/√2 = 0.7071, …; a neighbour's 0.6, 0.6/√2 = 0.4243.
 */
import { describe, expect, it } from 'vitest'
import type { ReachedEntity } from '../../../adapters/graph-reach.js'
import { graphPassages } from '../../../adapters/hybrid/graph-passages.js'

const named: ReachedEntity = {
  id: 'a', name: 'A', matched_by: 'name', hop: 0, score: 1,
  evidence: [{ chunk_id: 'd1#0', weight: 1 }, { chunk_id: 'd2#0', weight: 0.7071 }]
}
const neighbour: ReachedEntity = {
  id: 'b', name: 'B', matched_by: 'name', hop: 1, score: 0.6, via: { type: 'owns', source: 'a', target: 'b' },
  evidence: [{ chunk_id: 'd2#0', weight: 0.6 }, { chunk_id: 'd3#0', weight: 0.4243 }]
}

describe('graphPassages', () => {
  it('sums the paths of each chunk, so a chunk where a named entity and its neighbour meet comes first', () => {
    const { hits, paths } = graphPassages([named, neighbour], 10)
    expect(hits).toEqual([{ id: 'd2#0', score: 1.3071 }, { id: 'd1#0', score: 1 }, { id: 'd3#0', score: 0.4243 }])
    expect(paths.get('d2#0')).toEqual([
      { entity_id: 'a', entity_name: 'A', matched_by: 'name', hop: 0, weight: 0.7071 },
      { entity_id: 'b', entity_name: 'B', matched_by: 'name', hop: 1, relation: { type: 'owns', source: 'a', target: 'b' }, weight: 0.6 }
    ])
    expect(paths.get('d3#0')).toEqual([
      { entity_id: 'b', entity_name: 'B', matched_by: 'name', hop: 1, relation: { type: 'owns', source: 'a', target: 'b' }, weight: 0.4243 }
    ])
  })

  it('keeps the first `window` chunks and `maxPaths` paths per chunk', () => {
    const many: ReachedEntity[] = ['x', 'y', 'z'].map((id) => ({ id, name: id, matched_by: 'alias', hop: 0, score: 1, evidence: [{ chunk_id: 'c#0', weight: 1 }] }))
    const { hits, paths } = graphPassages([...many, neighbour], 1, 2)
    expect(hits).toEqual([{ id: 'c#0', score: 3 }])
    expect(paths.get('c#0')!.map((p) => p.entity_id)).toEqual(['x', 'y'])
    expect(paths.has('d2#0')).toBe(false)
  })

  it('orders equal sums by the heaviest single path, then by first reached', () => {
    const e1: ReachedEntity = { id: 'e1', name: 'E1', matched_by: 'name', hop: 0, score: 1, evidence: [{ chunk_id: 'p#0', weight: 0.5 }, { chunk_id: 'q#0', weight: 0.5 }] }
    const e2: ReachedEntity = { id: 'e2', name: 'E2', matched_by: 'name', hop: 0, score: 1, evidence: [{ chunk_id: 'p#0', weight: 0.5 }, { chunk_id: 'r#0', weight: 1 }, { chunk_id: 's#0', weight: 0.5 }] }
    expect(graphPassages([e1, e2], 10).hits.map((h) => h.id)).toEqual(['r#0', 'p#0', 'q#0', 's#0'])
  })

  it('gives no passages for no entities', () => {
    expect(graphPassages([], 50)).toEqual({ hits: [], paths: new Map() })
  })
})
