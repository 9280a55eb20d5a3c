/**
 * Strings that repeat across an in-memory store's items (types, relation names, short id suffixes), held once each: a
 * string equal to one held is given back as that one. Past `limit` strings a new one is given back as it came, so a
 * store whose repeats are not repeats after all (imported ids) does not hold them all twice.
 */
export class SharedStrings {
  private readonly held = new Map<string, string>()

  constructor(private readonly limit: number) {}

  share(s: string): string {
    const held = this.held.get(s)
    if (held !== undefined) return held
    if (this.held.size < this.limit) this.held.set(s, s)
    return s
  }
}
