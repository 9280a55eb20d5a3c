/**
 * Which segments to merge next, by size tiers as Lucene's log merge policy does: a segment's tier is
 * floor(log8(live documents)); once a tier holds 8 segments they become one of the next tier, so each
 * document is rewritten about log8(corpus) times and an index holds at most 7 segments per tier (a few
 * dozen at 200k documents, usually fewer). A segment that has lost more than a third of its documents is
 * rewritten alone, to drop them.
 */
const FACTOR = 8
const MAX_REMOVED_SHARE = 1 / 3

export interface MergeCandidate {
  data: { docCount: number }
  liveDocs: number
}

const tierOf = (live: number) => (live < FACTOR ? 0 : Math.floor(Math.log(live) / Math.log(FACTOR)))

export function pickMerge<S extends MergeCandidate>(segments: readonly S[]): S[] | undefined {
  const tiers = new Map<number, S[]>()
  for (const s of segments) {
    const tier = tierOf(s.liveDocs)
    const list = tiers.get(tier)
    if (list) list.push(s)
    else tiers.set(tier, [s])
  }
  for (const tier of [...tiers.keys()].sort((a, b) => a - b)) {
    const list = tiers.get(tier)!
    if (list.length >= FACTOR) return list.slice(0, FACTOR)
  }
  const wasteful = segments.find((s) => s.data.docCount > 0 && (s.data.docCount - s.liveDocs) / s.data.docCount > MAX_REMOVED_SHARE)
  return wasteful ? [wasteful] : undefined
}
