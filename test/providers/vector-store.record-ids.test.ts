import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../src/evaluation/statistics.js'
import { RecordIds } from '../../src/providers/vector-store/record-ids.js'

/** The same records as plain arrays and a map: what `RecordIds` must answer after every step. */
class Model {
  ids: string[] = []
  docs: string[] = []

  push(id: string, doc: string): number {
    if (this.ids.includes(id)) return -1
    this.ids.push(id)
    this.docs.push(doc)
    return this.ids.length - 1
  }

  removeAt(index: number): void {
    const last = this.ids.length - 1
    this.ids[index] = this.ids[last]!
    this.docs[index] = this.docs[last]!
    this.ids.pop()
    this.docs.pop()
  }
}

function expectSame(ids: RecordIds, model: Model, absent: readonly string[]): void {
  expect(ids.length).toBe(model.ids.length)
  expect(ids.slice(0, ids.length)).toEqual(model.ids)
  model.ids.forEach((id, i) => {
    expect(ids.at(i)).toBe(id)
    expect(ids.docAt(i)).toBe(model.docs[i])
    expect(ids.indexOf(id)).toBe(i)
  })
  for (const id of absent) if (!model.ids.includes(id)) expect(ids.indexOf(id)).toBe(-1)
}

describe('RecordIds: a partition\'s ids by number and numbers by id, without a string per record', () => {
  // chunks `<doc>#n`, Facets `<Episode>/fN/pM`, records whose id is their document's, ids that do not begin with their
  // document's, tails longer than the shared ones, and a document id of ''
  const idFor = (r: () => number): [string, string] => {
    const doc = `doc${Math.floor(r() * 40)}`
    switch (Math.floor(r() * 6)) {
      case 0: return [`${doc}#${Math.floor(r() * 30)}`, doc]
      case 1: return [`${doc}/f${Math.floor(r() * 9)}/p${Math.floor(r() * 3)}`, doc]
      case 2: return [doc, doc]
      case 3: return [`other-${Math.floor(r() * 50)}`, doc]
      case 4: return [`${doc}/a-tail-longer-than-twelve-${Math.floor(r() * 20)}`, doc]
      default: return [`x${Math.floor(r() * 20)}`, '']
    }
  }

  it('answers as arrays and a map do through pushes, removes (the last record moving into the hole), refiles and growth', () => {
    const r = seededRandom(11)
    const ids = new RecordIds()
    const model = new Model()
    const seen: string[] = []
    for (let step = 0; step < 4000; step++) {
      const roll = r()
      if (roll < 0.6 || model.ids.length === 0) {
        const [id, doc] = idFor(r)
        seen.push(id)
        expect(ids.push(id, doc)).toBe(model.push(id, doc))
      } else if (roll < 0.9) {
        const index = Math.floor(r() * model.ids.length)
        ids.removeAt(index)
        model.removeAt(index)
      } else {
        const index = Math.floor(r() * model.ids.length)
        const doc = r() < 0.5 ? '' : `moved${Math.floor(r() * 3)}`
        ids.refile(index, model.ids[index]!, doc)
        model.docs[index] = doc
      }
      if (step % 97 === 0) expectSame(ids, model, seen.slice(-200))
    }
    expectSame(ids, model, seen)
    // emptied one by one from the front (every remove moves the last record), then cleared and filled again
    while (model.ids.length > 0) {
      ids.removeAt(0)
      model.removeAt(0)
    }
    expectSame(ids, model, seen)
    ids.clear()
    expect(ids.push('a#1', 'a')).toBe(0)
    expect(ids.indexOf('a#1')).toBe(0)
    expect(ids.indexOf('a#2')).toBe(-1)
  })

  it('a frozen copy keeps its ids whatever comes after, and tells which records are still where it had them', () => {
    const ids = new RecordIds()
    for (const n of [0, 1, 2, 3]) ids.push(`d#${n}`, 'd')
    const frozen = ids.frozen()
    ids.removeAt(1) // d#3 moves to 1
    ids.push('e#0', 'e')
    expect(frozen.slice(0, frozen.length)).toEqual(['d#0', 'd#1', 'd#2', 'd#3'])
    expect([0, 1, 2, 3].map((n) => frozen.sameAt(n, ids))).toEqual([true, false, true, false])
  })
})
