/**
 * The rebuild applier: `POST /documents/{id}/rebuild` writes the named channels of documents again from their stored
 * chunks, with no re-parse and no embedding unless `vectors` is named (docs/write-path.md, "Rebuilding an index"): the
 * chunk channels under the `documents:` lock the write path hands it, then each derived channel by the write path's own
 * derivation (under its lock, recorded in the index status); `entity_vectors` by the namespace's background entity-names
 * applier, asked for and waited on.
 */
import type { Change, RebuildResult } from '../changes.js'
import type { DocumentLibraries } from '../libraries.js'
import type { Exclusive } from '../write-lock.js'
import { rebuildDocuments } from './writers/documents.js'

type RebuildChange = Extract<Change, { kind: 'rebuild' }>

export interface RebuildApplyOptions {
  /** The `documents:` lock. */
  exclusive: Exclusive
  /** Derives the documents' part of the derived graph again; what they have there now, per document. */
  deriveGraph: (docIds: readonly string[]) => Promise<Map<string, number>>
  /** Derives the documents' Episodes again; what they have now, per document. */
  deriveEpisodes: (docIds: readonly string[]) => Promise<Map<string, number>>
  /** Runs the entity-names applier of the namespace to its end; the names of the documents' entities held now, per document. */
  syncEntityNames: (docIds: readonly string[]) => Promise<Map<string, number>>
}

export async function applyRebuild(libraries: DocumentLibraries, namespace: string, change: RebuildChange, options: RebuildApplyOptions): Promise<RebuildResult> {
  const library = libraries.get(namespace)
  const missing = change.ids.filter((id) => !library?.has(id))
  const ids = change.ids.filter((id) => library?.has(id))
  const rebuilt: RebuildResult['rebuilt'] = {}
  const { channels } = change
  if (library && ids.length > 0 && (channels.includes('vectors') || channels.includes('lexical'))) {
    const written = await rebuildDocuments(library, ids, { reembed: channels.includes('vectors'), exclusive: options.exclusive })
    // one write of the points and the lexical index serves both channels
    for (const channel of ['vectors', 'lexical'] as const) if (channels.includes(channel)) rebuilt[channel] = written
  }
  const derived = async (derive: (docIds: readonly string[]) => Promise<Map<string, number>>) => {
    const items = ids.length > 0 ? await derive(ids) : new Map<string, number>()
    return { documents: ids.length, items: [...items.values()].reduce((n, k) => n + k, 0) }
  }
  if (channels.includes('derived_graph')) rebuilt.derived_graph = await derived(options.deriveGraph)
  if (channels.includes('derived_episodes')) rebuilt.derived_episodes = await derived(options.deriveEpisodes)
  // after the derived graph: its names are the ones to hold
  if (channels.includes('entity_vectors')) rebuilt.entity_vectors = await derived(options.syncEntityNames)
  return { rebuilt, missing }
}
