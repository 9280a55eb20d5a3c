/**
 * Namespaces: the partition key every port method that reads or writes takes explicitly. A namespace holds
 * its own documents and chunks, knowledge graph and episodic memory; nothing of one is ever returned,
 * counted or changed by a call naming another.
 */

import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

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

/**
 * Folder layout the embedded stores share: `default` lives in the store's root folder (where a version without
 * namespaces kept everything), any other namespace in `<root>/namespaces/<namespace>`.
 */
const NAMESPACES_DIR = 'namespaces'

/** The folder of `namespace` under a store's `root`: `root` itself for `default`, else `<root>/namespaces/<namespace>`. */
export function namespaceDir(root: string, namespace: string): string {
  return namespace === DEFAULT_NAMESPACE ? root : join(root, NAMESPACES_DIR, namespace)
}

/**
 * The namespaces other than `default` with a folder under `root` (valid names only, in directory order);
 * none when `<root>/namespaces` does not exist. Other read errors are thrown.
 */
export async function storedNamespaces(root: string): Promise<string[]> {
  const entries = await readdir(join(root, NAMESPACES_DIR)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return []
    throw error
  })
  return entries.filter((ns) => isNamespace(ns) && ns !== DEFAULT_NAMESPACE)
}
