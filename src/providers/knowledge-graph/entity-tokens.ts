import { analyze } from '../../kernel/cjk-analyzer.js'

/**
 * A token's postings: `slot * 4 + weight` alone for one entity (most tokens name one), an array of them while few, a map
 * past `MAP_FROM`.
 */
type Postings = number | number[] | Map<number, number>

const MAP_FROM = 64

/**
 * The embedded graph's keyword index (`searchKeywords`): token -> (entity slot -> 2 when the entity's name has the
 * token, else 1 for its description). Slots are small integers, so a query adds scores in a typed array rather than a
 * map keyed by id. What an entity was indexed with is kept as its name and description in two arrays by slot (strings
 * its parts hold anyway; an object a slot cost ~90 bytes, issue 44); its tokens are analysed again to take it out.
 */
export class EntityTokens {
  private readonly postings = new Map<string, Postings>()
  private readonly slotOf = new Map<string, number>()
  private readonly slotIds: Array<string | undefined> = []
  /** The name and description a slot's entity was indexed with; no name while it is not indexed. */
  private readonly slotNames: Array<string | undefined> = []
  private readonly slotDescriptions: Array<string | undefined> = []
  private readonly freeSlots: number[] = []

  /** Indexes the entity's name and description tokens, unless they are what the index holds for it already. */
  index(id: string, name: string, description: string | undefined): void {
    const indexedAt = this.slotOf.get(id)
    if (indexedAt !== undefined && this.slotNames[indexedAt] === name && this.slotDescriptions[indexedAt] === description) return
    this.unindex(id)
    let slot = this.slotOf.get(id)
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.slotIds.length
      this.slotOf.set(id, slot)
      this.slotIds[slot] = id
    }
    for (const [token, weight] of weightsOf(name, description)) {
      const postings = this.postings.get(token)
      if (postings === undefined) this.postings.set(token, slot * 4 + weight)
      else if (typeof postings === 'number') this.postings.set(token, [postings, slot * 4 + weight])
      else if (Array.isArray(postings)) {
        // a short array is made anew at its exact length (one grown by `push` keeps room for about 16 more)
        let longer = postings
        if (postings.length < 16) longer = postings.concat(slot * 4 + weight)
        else postings.push(slot * 4 + weight)
        this.postings.set(token, longer.length >= MAP_FROM ? new Map(longer.map((p) => [p >> 2, p & 3])) : longer)
      } else postings.set(slot, weight)
    }
    this.slotNames[slot] = name
    this.slotDescriptions[slot] = description
  }

  /** Takes the entity out of the index and frees its slot. */
  remove(id: string): void {
    this.unindex(id)
    const slot = this.slotOf.get(id)
    if (slot === undefined) return
    this.slotOf.delete(id)
    this.slotIds[slot] = undefined
    this.freeSlots.push(slot)
  }

  /** Each entity sharing a token with the query, with the sum of its weights over the query's distinct tokens. */
  scores(tokens: readonly string[]): Array<[string, number]> {
    const scores = new Int32Array(this.slotIds.length)
    const touched: number[] = []
    const add = (slot: number, weight: number) => {
      if (scores[slot] === 0) touched.push(slot)
      scores[slot] = scores[slot]! + weight
    }
    for (const token of new Set(tokens)) {
      const postings = this.postings.get(token)
      if (postings === undefined) continue
      if (typeof postings === 'number') add(postings >> 2, postings & 3)
      else if (Array.isArray(postings)) for (const p of postings) add(p >> 2, p & 3)
      else for (const [slot, weight] of postings) add(slot, weight)
    }
    return touched.map((slot) => [this.slotIds[slot]!, scores[slot]!])
  }

  private unindex(id: string): void {
    const slot = this.slotOf.get(id)
    const name = slot === undefined ? undefined : this.slotNames[slot]
    if (slot === undefined || name === undefined) return
    for (const token of weightsOf(name, this.slotDescriptions[slot]).keys()) {
      const postings = this.postings.get(token)
      if (postings === undefined) continue
      if (typeof postings === 'number') {
        if (postings >> 2 === slot) this.postings.delete(token)
      } else if (Array.isArray(postings)) {
        const at = postings.findIndex((p) => p >> 2 === slot)
        if (at < 0) continue
        postings[at] = postings[postings.length - 1]!
        if (postings.length === 2) this.postings.set(token, postings[0]!)
        else if (postings.length <= 16) this.postings.set(token, postings.slice(0, -1))
        else postings.pop()
      } else {
        postings.delete(slot)
        if (postings.size < MAP_FROM / 2) this.postings.set(token, [...postings].map(([s, w]) => s * 4 + w))
      }
    }
    this.slotNames[slot] = undefined
    this.slotDescriptions[slot] = undefined
  }
}

/** Token -> 2 for the name's tokens, 1 for the description's other tokens. */
function weightsOf(name: string, description: string | undefined): Map<string, number> {
  const nameTokens = new Set(analyze(name))
  const weights = new Map<string, number>()
  for (const token of nameTokens) weights.set(token, 2)
  for (const token of analyze(description ?? '')) if (!nameTokens.has(token)) weights.set(token, 1)
  return weights
}
