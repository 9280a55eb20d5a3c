import type { MatchStrength, RecallItem } from '../types.js'

/**
 * How far a graphrag bundle can be trusted, from how its first item matched:
 * `strong`: an entity the question names by its name; `medium`: named by an alias (aliases are often
 * short abbreviations, more ambiguous); `weak`: no entity is named in full and the items come from names the
 * question holds only in part, from the keyword fallback or from the chunks best matching the question; `none`: no item.
 */
export function graphragMatchStrength(items: readonly RecallItem<{ matched_by?: unknown; hop?: unknown }>[]): MatchStrength {
  const top = items[0]
  if (!top) return 'none'
  switch (top.metadata.matched_by) {
    case 'name': return 'strong'
    case 'alias': return 'medium'
    default: return 'weak'
  }
}
