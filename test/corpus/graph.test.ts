import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import {
  GraphIngestError,
  parseGraphJsonl,
  readGraphFile,
  toGraphWrite,
  validateGraphBody
} from '../../src/corpus/graph.js'
import type { KnowledgeGraphStore } from '../../src/providers/knowledge-graph/port.js'
import { storeMakers } from '../adapters/graphrag/fixture.js'
import { deleteGraphEntities, ingestGraph } from '../helpers/turns.js'

describe('validateGraphBody', () => {
  const ok = { entities: [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }], relations: [{ source: 'a', target: 'b', type: 'x' }] }
  it.each([
    ['a valid body', ok, []],
    ['an empty body', {}, []],
    ['not an object', [], ['body must be object (got [])']],
    ['entities not an array', { entities: {} }, ['body/entities must be array (got {})']],
    ['unknown top-level field', { entities: [], nodes: [] }, ['nodes: unknown field (expected entities, relations)']],
    ['entity without id and name (the schema reports its first misfit, as the route does)', { entities: [{}] }, ["body/entities/0 must have required property 'id'"]],
    ['blank name; a numeric id is coerced to a string, as over HTTP', { entities: [{ id: 7, name: '  ' }] }, ['entities[0].name: must not be empty (got "  ")']],
    ['aliases not strings', { entities: [{ id: 'a', name: 'A', aliases: ['ok', {}] }] }, ['body/entities/0/aliases/1 must be string (got {})']],
    ['duplicate entity ids', { entities: [{ id: 'a', name: 'A' }, { id: 'a', name: 'B' }] }, ['entities[1].id: duplicate of entities[0].id "a"']],
    ['relation without type', { entities: ok.entities, relations: [{ source: 'a', target: 'b' }] }, ["body/relations/0 must have required property 'type'"]],
    ['negative weight', { entities: ok.entities, relations: [{ source: 'a', target: 'b', type: 'x', weight: -1 }] }, ['body/relations/0/weight must be >= 0 (got -1)']],
    [
      'duplicate derived relation ids',
      { entities: ok.entities, relations: [{ source: 'a', target: 'b', type: 'x' }, { source: 'a', target: 'b', type: 'x', weight: 2 }] },
      ['relations[1].id: duplicate of relations[0] (id "a-[x]->b")']
    ],
    ['over-long name', { entities: [{ id: 'a', name: 'x'.repeat(513) }] },
      [`body/entities/0/name must NOT have more than 512 characters (got "${'x'.repeat(60)}"… (513 characters))`]],
    // ajv counts code points, as the schema's maxLength means: 512 astral characters fit, 513 do not
    ['512 astral characters fit', { entities: [{ id: 'a', name: '𠀀'.repeat(512) }] }, []]
  ])('%s', (_label, body, problems) => {
    expect(validateGraphBody(body)).toEqual(problems)
  })

  it('checks relation endpoints against the body and the known ids when given', () => {
    const body = { entities: [{ id: 'a', name: 'A' }], relations: [{ source: 'a', target: 'X', type: 't' }, { source: 'Y', target: 'k', type: 't' }] }
    expect(validateGraphBody(body, new Set(['k']))).toEqual([
      'relations[0].target: unknown entity "X"',
      'relations[1].source: unknown entity "Y"'
    ])
  })
})

describe('toGraphWrite', () => {
  it('fills optional lists, derives relation ids and defaults weights to 1', () => {
    expect(toGraphWrite({ entities: [{ id: 'a', name: 'A' }], relations: [{ source: 'a', target: 'a', type: 'self' }] })).toEqual({
      entities: [{ id: 'a', name: 'A', aliases: [], source_chunk_ids: [] }],
      relations: [{ id: 'a-[self]->a', source: 'a', target: 'a', type: 'self', weight: 1 }]
    })
  })
})

describe('graph files', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-graph-files-'))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it('reads .json as the request body and .jsonl as one entity or relation per line', async () => {
    const body = { entities: [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }], relations: [{ source: 'a', target: 'b', type: 'x' }] }
    await writeFile(join(dir, 'g.json'), JSON.stringify(body))
    await writeFile(
      join(dir, 'g.jsonl'),
      ['{"relation": {"source": "a", "target": "b", "type": "x"}}', '', '{"entity": {"id": "a", "name": "A"}}', '{"entity": {"id": "b", "name": "B"}}'].join('\n')
    )
    expect(await readGraphFile(join(dir, 'g.json'))).toEqual(body)
    expect(await readGraphFile(join(dir, 'g.jsonl'))).toEqual(body)
    await expect(readGraphFile(join(dir, 'g.csv'))).rejects.toThrow(/\.json or \.jsonl/)
  })

  it('names the line of a bad .jsonl line', () => {
    const error = (() => {
      try {
        parseGraphJsonl('{"entity": {"id": "a", "name": "A"}}\n{"node": {}}\nnot json', 'g.jsonl')
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(GraphIngestError)
    expect((error as GraphIngestError).problems).toEqual([
      'g.jsonl:2: expected {"entity": {...}} or {"relation": {...}}',
      expect.stringMatching(/^g\.jsonl:3: not valid JSON/)
    ])
  })
})

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`ingestGraph on the ${maker.name} store`, () => {
    let store: KnowledgeGraphStore
    let drop: () => Promise<void>
    beforeAll(async () => {
      ;({ store, drop } = await maker.make())
    })
    afterAll(async () => {
      await store.close()
      await drop()
    })

    it('is idempotent by id; an unknown endpoint is a 400 listing the missing ids, and nothing is written', async () => {
      const body = {
        entities: [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }],
        relations: [{ source: 'a', target: 'b', type: 'x' }]
      }
      expect(await ingestGraph(store, 'default', body)).toEqual({ entities: 2, relations: 1 })
      expect(await ingestGraph(store, 'default', body)).toEqual({ entities: 2, relations: 1 })
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })

      const bad = {
        entities: [{ id: 'c', name: 'C' }],
        relations: [
          { source: 'c', target: 'a', type: 'y' },
          { source: 'c', target: 'ghost', type: 'y' },
          { source: 'phantom', target: 'b', type: 'y' }
        ]
      }
      const error = await ingestGraph(store, 'default', bad).then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(GraphIngestError)
      expect((error as GraphIngestError).problems).toEqual([
        'relations[1].target: unknown entity "ghost"',
        'relations[2].source: unknown entity "phantom"'
      ])
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
      expect(await store.getEntities('default', ['c'])).toEqual([])
    })

    it('a malformed body is refused before the store is touched', async () => {
      const before = await store.version('default')
      await expect(ingestGraph(store, 'default', { entities: [{ id: 'z' }] })).rejects.toMatchObject({ problems: ["body/entities/0 must have required property 'name'"] })
      expect(await store.version('default')).toBe(before)
    })

    it('a graph delete removes the entity and its relations; an unknown id is not answered as deleted', async () => {
      await ingestGraph(store, 'default', { entities: [{ id: 'd', name: 'D' }], relations: [{ source: 'd', target: 'a', type: 'z' }] })
      expect(await deleteGraphEntities(store, 'default', ['d'])).toEqual(['d'])
      expect(await deleteGraphEntities(store, 'default', ['d'])).toEqual([])
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
    })
  })
}
