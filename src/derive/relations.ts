/**
 * The relations of one sentence: every two entities at most `cooccurrenceWindow` mentions apart. Within one clause, a
 * predicate between them types the relation, from the first to the second (`左氧氟沙星禁用于…儿童`); a passive marker
 * before the second (`A 由 B 负责`) turns it round and takes the predicate after the second (`B 负责 A`). Without a
 * predicate the relation is `co_occurs`, from the smaller key to the larger, so that it reads the same either way.
 */
import type { DerivationOptions } from './options.js'
import type { Mention } from './segment.js'
import { CLAUSE_BREAK } from './sentences.js'

export interface SentenceRelation {
  source: string
  target: string
  type: string
}

export function relationsOf(sentence: string, mentions: readonly Mention[], options: DerivationOptions): SentenceRelation[] {
  // the first mention of each entity stands for it
  const firsts: Mention[] = []
  for (const m of mentions) if (!firsts.some((f) => f.key === m.key)) firsts.push(m)
  // a predicate inside another mention (管理 in 管理员) is none: mentions are blanked out of the text searched
  let masked = sentence
  for (const m of mentions) masked = masked.slice(0, m.start) + '\u0001'.repeat(m.end - m.start) + masked.slice(m.end)
  const relations = new Map<string, SentenceRelation>()
  for (let i = 0; i < firsts.length; i++) {
    for (let j = i + 1; j < firsts.length && j - i <= options.cooccurrenceWindow; j++) {
      const relation = relate(masked, firsts[i]!, firsts[j]!, firsts[j + 1], options)
      relations.set(`${relation.source}\u0000${relation.type}\u0000${relation.target}`, relation)
    }
  }
  return [...relations.values()]
}

function relate(sentence: string, a: Mention, b: Mention, afterB: Mention | undefined, options: DerivationOptions): SentenceRelation {
  const between = sentence.slice(a.end, b.start)
  if (!CLAUSE_BREAK.test(between)) {
    const verb = firstOf(between, options.predicates)
    const passive = firstOf(between, options.passiveMarkers)
    if (verb && !(passive && passive.at < verb.at)) return { source: a.key, target: b.key, type: verb.word }
    if (passive) {
      const rest = sentence.slice(b.end, afterB ? afterB.start : sentence.length).split(CLAUSE_BREAK)[0]!
      const after = firstOf(rest, options.predicates)
      if (after) return { source: b.key, target: a.key, type: after.word }
    }
  }
  const [source, target] = a.key < b.key ? [a.key, b.key] : [b.key, a.key]
  return { source, target, type: options.cooccurrenceType }
}

/** The word of `words` that occurs first in `text` (the longest of those starting there). */
function firstOf(text: string, words: readonly string[]): { word: string; at: number } | undefined {
  let best: { word: string; at: number } | undefined
  for (const word of words) {
    const at = text.indexOf(word)
    if (at < 0) continue
    if (!best || at < best.at || (at === best.at && word.length > best.word.length)) best = { word, at }
  }
  return best
}
