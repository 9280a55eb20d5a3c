/**
 * Entities found by meaning (docs/derivation.md, "Entities found by meaning"): every name and alias of a namespace's
 * graph has a vector in its entity collection (`src/kernel/entity-names.ts`), and a question reaches, after the
 * entities it names, those whose name or alias is among the nearest its vector and at least `floor` similar
 * (`matched_by: meaning`, scored like a partial name by the similarity: `expand.ts`).
 */
import type { NameMatch, NameMatcher } from './match.js'

export interface MeaningOptions {
  /** Least cosine similarity of the question and a name. */
  floor: number
  /** Nearest names and aliases read per question. */
  limit: number
}

/** The `limit` names and aliases (normalised, `entityNameKey`) of a namespace nearest a question, most similar first. */
export type NameSearch = (namespace: string, question: string, limit: number, signal: AbortSignal) => Promise<Array<{ text: string; similarity: number }>>

/**
 * The name matches, then the entities of the names at least `floor` similar that the matcher's part of the graph holds
 * and no name match found already, in the search's order (an entity reached by two names keeps the nearer).
 */
export function meaningMatches(
  named: readonly NameMatch[], nearest: ReadonlyArray<{ text: string; similarity: number }>, matcher: Pick<NameMatcher, 'entitiesOf'>, floor: number
): NameMatch[] {
  const seen = new Set(named.map((m) => m.entityId))
  const found: NameMatch[] = []
  for (const { text, similarity } of nearest) {
    if (similarity < floor) continue
    for (const entityId of matcher.entitiesOf(text)) {
      if (seen.has(entityId)) continue
      seen.add(entityId)
      found.push({ entityId, matchedBy: 'meaning', position: Number.MAX_SAFE_INTEGER, key: text, share: Math.round(similarity * 10_000) / 10_000 })
    }
  }
  return [...named, ...found]
}
