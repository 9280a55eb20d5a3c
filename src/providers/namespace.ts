/**
 * Namespaces: the partition key every port method that reads or writes takes explicitly. A namespace holds
 * its own documents and chunks, knowledge graph and episodic memory; nothing of one is ever returned,
 * counted or changed by a call naming another.
 */

/** The namespace of requests that name none, and of everything a version without namespaces stored. */
export const DEFAULT_NAMESPACE = 'default'

/** Lowercase letters and digits, then also `_` and `-`, 1 to 63 characters: safe as a folder name and a payload value. */
export const NAMESPACE_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$'

const NAMESPACE = new RegExp(NAMESPACE_PATTERN)

export function isNamespace(value: unknown): value is string {
  return typeof value === 'string' && NAMESPACE.test(value)
}

/** Throws a RangeError naming the value unless it is a valid namespace (ports check what they are handed). */
export function checkNamespace(value: string): string {
  if (!isNamespace(value)) throw new RangeError(`namespace ${JSON.stringify(value)} does not match ${NAMESPACE_PATTERN}`)
  return value
}
