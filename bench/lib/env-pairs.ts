/** `KEY=VALUE,KEY=VALUE` (a bench's `--env`) as an environment object; empty gives none. */
export function envPairs(text: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {}
  for (const part of (text ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const at = part.indexOf('=')
    if (at <= 0) throw new Error(`--env: "${part}" is not KEY=VALUE`)
    pairs[part.slice(0, at)] = part.slice(at + 1)
  }
  return pairs
}
