/** `truncate`: strip; longer than `n` code points keeps `n - 1`, right-stripped, plus "…". */
export function truncateText(s: string | null | undefined, n: number): string {
  const t = (s ?? '').trim()
  const chars = [...t]
  if (chars.length <= n) return t
  return `${chars.slice(0, n - 1).join('').trimEnd()}…`
}

/** has_facet: `"{search_text}: {description≤300}"`, or just the search text. */
export function hasFacetEdgeText(facet: { search_text: string; description?: string | null }): string {
  const d = truncateText(facet.description, 300)
  return d ? `${facet.search_text}: ${d}` : facet.search_text
}

/** has_point: `"{facet} -> {point}: {description≤200}"`, or without the description. */
export function hasPointEdgeText(facetSearchText: string, point: { search_text: string; description?: string | null }): string {
  const d = truncateText(point.description, 200)
  return d ? `${facetSearchText} -> ${point.search_text}: ${d}` : `${facetSearchText} -> ${point.search_text}`
}

/** Episode involves_entity: `"{name} | {context or description ≤200}"`, or just the name. */
export function episodeEntityEdgeText(name: string, description?: string | null): string {
  const d = truncateText(description, 200)
  return d ? `${name} | ${d}` : name
}

/** Facet involves_entity: `"{name} | {desc≤180} (in: {facet≤50})"` and its shorter forms. */
export function facetEntityEdgeText(name: string, description: string | null | undefined, facetSearchText: string | null | undefined): string {
  const d = truncateText(description, 180)
  const f = truncateText(facetSearchText, 50)
  if (d && f) return `${name} | ${d} (in: ${f})`
  if (d) return `${name} | ${d}`
  if (f) return `${name} (in: ${f})`
  return name
}
