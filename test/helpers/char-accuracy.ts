/** Text compared as characters: NFKC (full-width Latin and digits to ASCII), whitespace removed. */
const comparable = (text: string): string[] => [...text.normalize('NFKC').replace(/\s+/gu, '')]

/** Levenshtein distance over code points (insert, delete, substitute: 1 each). */
function editDistance(a: readonly string[], b: readonly string[]): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * Character accuracy of recognised text against a reference: 1 − edit distance / reference length, both compared
 * without whitespace after NFKC; at most 1, below 0 when the recognised text is mostly wrong and longer.
 */
export function charAccuracy(recognised: string, reference: string): number {
  const ref = comparable(reference)
  return ref.length === 0 ? (comparable(recognised).length === 0 ? 1 : 0) : 1 - editDistance(comparable(recognised), ref) / ref.length
}
