/**
 * Finding the entities a question names: every name and alias that occurs in the
 * question after NFKC folding and Latin lowercasing; where occurrences overlap, the longest wins.
 * An Aho-Corasick automaton over all names finds every occurrence in one pass over the question, so the
 * cost of a lookup does not grow with the number of entities. With fragment options, also the names the question
 * holds only in part (`fragments.ts`): `partial` matches, after the others.
 */
import type { KgEntityNames } from '../../src/providers/knowledge-graph/port.js'
import { entityNameKey, normalizeForMatch } from '../../src/kernel/entity-names.js'
import { buildFragmentIndex, type FragmentOptions } from './fragments.js'

type MatchedBy = 'name' | 'alias' | 'partial' | 'meaning'

/** An entity named in the question. */
export interface NameMatch {
  entityId: string
  matchedBy: MatchedBy
  /** Where the first kept occurrence starts, in UTF-16 code units of the normalised question. */
  position: number
  /** The normalised name or alias that occurred (for a partial match: the name or alias the fragment is part of). */
  key: string
  /** The share of the name's characters the question holds: 1, or less for a partial match; for a `meaning` match, the similarity. */
  share: number
}

export interface NameMatcher {
  /** How many distinct normalised names and aliases the automaton holds. */
  readonly keys: number
  /** How many entities it was built from (0 for an empty graph). */
  readonly entities: number
  /**
   * The entities named in `question`, by first occurrence, then entity id; then those it names only in part (with
   * fragment options), by the fragment's position, then entity id.
   */
  match(question: string): NameMatch[]
  /** The entities a normalised name or alias (`entityNameKey`) is the name or an alias of, by id; `[]` for an unknown text. */
  entitiesOf(key: string): string[]
}

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const WORD = /[\p{L}\p{N}\p{M}_]/u

/** A letter or digit of a non-CJK script: such characters join into words, so a name must not cut one. */
function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && WORD.test(ch) && !CJK.test(ch)
}

interface KeyOwner {
  entityId: string
  matchedBy: MatchedBy
}

/** Builds the automaton from every entity's name and aliases (and, with `fragments`, the index of their pieces). */
export function buildNameMatcher(entries: readonly KgEntityNames[], fragments?: FragmentOptions): NameMatcher {
  const keyIndex = new Map<string, number>()
  const keys: string[] = []
  const owners: KeyOwner[][] = []
  const addKey = (raw: string, entityId: string, matchedBy: MatchedBy) => {
    const key = entityNameKey(raw)
    if (key === '') return
    let index = keyIndex.get(key)
    if (index === undefined) {
      index = keys.length
      keyIndex.set(key, index)
      keys.push(key)
      owners.push([])
    }
    const list = owners[index]!
    const existing = list.find((o) => o.entityId === entityId)
    if (!existing) list.push({ entityId, matchedBy })
    else if (matchedBy === 'name') existing.matchedBy = 'name'
  }
  for (const entry of entries) {
    addKey(entry.name, entry.id, 'name')
    for (const alias of entry.aliases) addKey(alias, entry.id, 'alias')
  }
  const automaton = buildAutomaton(keys)
  const pieces = fragments ? buildFragmentIndex(keys, fragments) : undefined

  return {
    keys: keys.length,
    entities: entries.length,
    entitiesOf(key: string): string[] {
      const index = keyIndex.get(key)
      return index === undefined ? [] : owners[index]!.map((o) => o.entityId).sort()
    },
    match(question: string): NameMatch[] {
      const text = normalizeForMatch(question)
      const found = automaton.search(text).filter(({ start, end }) => {
        // A Latin or digit name counts only as a whole word: `go` does not occur in `google`.
        const first = charAfter(text, start)
        const last = charBefore(text, end)
        if (isWordChar(first) && isWordChar(charBefore(text, start))) return false
        if (isWordChar(last) && isWordChar(charAfter(text, end))) return false
        return true
      })
      // Longest first; among equal lengths the leftmost; a kept occurrence blocks any it overlaps.
      found.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start)
      const covered = new Uint8Array(text.length)
      const spans: Occurrence[] = []
      const byEntity = new Map<string, NameMatch>()
      for (const occurrence of found) {
        let free = true
        for (let i = occurrence.start; i < occurrence.end; i++) if (covered[i]) { free = false; break }
        if (!free) continue
        covered.fill(1, occurrence.start, occurrence.end)
        spans.push(occurrence)
        for (const owner of owners[occurrence.key]!) {
          const seen = byEntity.get(owner.entityId)
          if (!seen) {
            byEntity.set(owner.entityId, {
              entityId: owner.entityId,
              matchedBy: owner.matchedBy,
              position: occurrence.start,
              key: keys[occurrence.key]!,
              share: 1
            })
          } else {
            if (owner.matchedBy === 'name') seen.matchedBy = 'name'
            if (occurrence.start < seen.position) {
              seen.position = occurrence.start
              seen.key = keys[occurrence.key]!
            }
          }
        }
      }
      const named = [...byEntity.values()].sort(byPosition)
      if (!pieces) return named
      const partial = new Map<string, NameMatch>()
      for (const hit of pieces.lookup(text, spans)) {
        for (const owner of owners[hit.key]!) {
          if (byEntity.has(owner.entityId)) continue
          const seen = partial.get(owner.entityId)
          if (seen && seen.share >= hit.share) continue
          partial.set(owner.entityId, {
            entityId: owner.entityId, matchedBy: 'partial', position: seen?.position ?? hit.position, key: keys[hit.key]!, share: hit.share
          })
        }
      }
      return [...named, ...[...partial.values()].sort(byPosition)]
    }
  }
}

const byPosition = (a: NameMatch, b: NameMatch) => a.position - b.position || (a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : 0)

function charBefore(text: string, index: number): string | undefined {
  if (index <= 0) return undefined
  const code = text.charCodeAt(index - 1)
  // A low surrogate: take the whole code point.
  return code >= 0xdc00 && code <= 0xdfff && index >= 2 ? text.slice(index - 2, index) : text[index - 1]
}

function charAfter(text: string, index: number): string | undefined {
  if (index >= text.length) return undefined
  const point = text.codePointAt(index)
  return point === undefined ? undefined : String.fromCodePoint(point)
}

interface Occurrence {
  key: number
  start: number
  end: number
}

/**
 * Aho-Corasick over UTF-16 code units. Transitions live in one Map keyed by `state * 65536 + code unit`
 * rather than a Map per state: a tenth of the memory at 100k names.
 */
function buildAutomaton(keys: readonly string[]): { search(text: string): Occurrence[] } {
  const goto = new Map<number, number>()
  const output: number[] = [-1]
  const depth: number[] = [0]
  const children: number[][] = [[]]
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!
    let state = 0
    for (let i = 0; i < key.length; i++) {
      const edge = state * 65536 + key.charCodeAt(i)
      let next = goto.get(edge)
      if (next === undefined) {
        next = output.length
        goto.set(edge, next)
        output.push(-1)
        depth.push(depth[state]! + 1)
        children.push([])
        children[state]!.push(key.charCodeAt(i))
      }
      state = next
    }
    output[state] = k
  }
  const states = output.length
  const fail = new Int32Array(states)
  // Nearest proper suffix state that ends a key, or 0.
  const dictionary = new Int32Array(states)
  const queue: number[] = []
  for (const code of children[0]!) queue.push(goto.get(code)!)
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!
    for (const code of children[state]!) {
      const child = goto.get(state * 65536 + code)!
      let f = fail[state]!
      while (f !== 0 && !goto.has(f * 65536 + code)) f = fail[f]!
      const target = goto.get(f * 65536 + code)
      fail[child] = target !== undefined && target !== child ? target : 0
      const suffix = fail[child]!
      dictionary[child] = output[suffix]! >= 0 ? suffix : dictionary[suffix]!
      queue.push(child)
    }
  }

  return {
    search(text: string): Occurrence[] {
      const found: Occurrence[] = []
      let state = 0
      for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i)
        while (state !== 0 && !goto.has(state * 65536 + code)) state = fail[state]!
        state = goto.get(state * 65536 + code) ?? 0
        for (let s = output[state]! >= 0 ? state : dictionary[state]!; s !== 0; s = dictionary[s]!) {
          const key = output[s]!
          found.push({ key, start: i + 1 - depth[s]!, end: i + 1 })
        }
      }
      return found
    }
  }
}
