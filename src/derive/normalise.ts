/**
 * The key two mentions of one thing share: NFKC (full-width Latin and digits become ASCII), case-folded, inner
 * whitespace collapsed. `ＧＰＴ-4o`, `gpt-4o` and `GPT-4O` are one entity.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim()
}
