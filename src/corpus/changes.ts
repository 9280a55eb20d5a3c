/**
 * What a write changes in a namespace: one typed union for every door (REST, MCP, the CLI, the demo loader,
 * journal replay, namespace deletion). The same value is the journal's entry; the change log names the
 * documents it changed (`changedDocuments`).
 */
import type { DocumentChangeSet, IndexKind } from '../providers/generations/port.js'
import type { DocumentInput } from './documents/input.js'
import type { IngestSummary } from './documents/ingest-summary.js'
import type { EpisodicIngestResult } from './episodes/results.js'
import type { ConversationsWritten } from './conversations/results.js'
import type { GraphIngestResult } from './graph.js'
import type { HeldBefore } from './write-journal.js'
import type { NamespaceCounts } from './namespaces.js'
import type { Channel } from './index-status/channels.js'
import type { EntityNamesResult } from './entity-vectors.js'
import type { Reembedded } from './model-stores.js'

export type Change =
  | { kind: 'documents'; op: 'upsert'; documents: DocumentInput[] }
  | { kind: 'documents'; op: 'delete'; ids: string[] }
  | { kind: 'graph'; op: 'upsert'; body: unknown }
  | { kind: 'graph'; op: 'delete'; ids: string[] }
  | { kind: 'episodes'; op: 'upsert'; body: unknown }
  | { kind: 'episodes'; op: 'delete'; ids: string[] }
  | { kind: 'conversations'; op: 'upsert'; body: unknown }
  | { kind: 'conversations'; op: 'delete'; ids: string[] }
  | { kind: 'namespace'; op: 'drop' }
  /** The namespace's vectors made again with the running model (appliers/reembed.ts). */
  | { kind: 'model'; op: 'reembed' }
  /** Rebuilds these channels of these documents from their stored chunks (docs/write-path.md, "Rebuilding an index"). */
  | { kind: 'rebuild'; op: 'rebuild'; ids: string[]; channels: Channel[] }
  /** The background write after a graph change: the entity collection made to hold the graph's names (appliers/entity-names.ts). */
  | { kind: 'entities'; op: 'sync' }
  /**
   * Points a version before namespaces wrote, given to `default` (appliers/legacy-points.ts): the chunk collection's
   * under the `documents:` lock, the Episode collections' under `episodes:`. Sent by the start-up step only.
   */
  | { kind: 'legacy-points'; op: 'adopt'; chunks?: string; episodic?: string[] }

export type ChangeKind = Change['kind']

/**
 * The part of a namespace a lock guards: writers of one (namespace, store kind) take turns. Conversations take the
 * `episodes:` lock: they write the same graph and collections as derived Episodes, and share their entities.
 */
export type LockKind = Exclude<ChangeKind, 'namespace' | 'conversations' | 'model' | 'rebuild' | 'legacy-points'>

/** What a write answers, by its change (the write path adds the generation it reached). */
export type ResultOf<C extends Change> =
  C extends { kind: 'documents'; op: 'upsert' } ? IngestSummary
    : C extends { kind: 'graph'; op: 'upsert' } ? GraphIngestResult
      : C extends { kind: 'episodes'; op: 'upsert' } ? EpisodicIngestResult
        : C extends { kind: 'conversations'; op: 'upsert' } ? ConversationsWritten
        : C extends { kind: 'namespace' } ? { removed?: NamespaceCounts }
        : C extends { kind: 'model' } ? { reembedded: Reembedded }
        : C extends { kind: 'rebuild' } ? RebuildResult
        : C extends { kind: 'entities' } ? EntityNamesResult
        : C extends { kind: 'legacy-points' } ? { adopted: number }
          : { deleted: string[] }

/** What a rebuild did, per channel named: chunks written again, or derived items the documents have now. */
export interface RebuildResult {
  rebuilt: Partial<Record<Channel, { documents: number; chunks?: number; items?: number }>>
  /** Documents named that the namespace does not hold (nothing was done for them). */
  missing: string[]
}

/** One journal entry: a write announced before it touched a store. */
export interface WriteEntry {
  namespace: string
  change: Change
  /** A documents change's documents as the namespace held them when it was announced (absent in older entries). */
  before?: HeldBefore
}

/** The modes whose cached answers and generations a change concerns. */
export function recordedKinds(change: Change): IndexKind[] {
  switch (change.kind) {
    case 'documents': return ['hybrid']
    case 'graph': return ['graphrag']
    case 'entities': return ['graphrag']
    case 'episodes': return ['episodic']
    case 'conversations': return ['episodic']
    case 'namespace': return ['hybrid', 'graphrag', 'episodic']
    case 'model': return ['hybrid', 'graphrag', 'episodic']
    case 'legacy-points': return [...(change.chunks ? ['hybrid' as const] : []), ...(change.episodic?.length ? ['episodic' as const] : [])]
    case 'rebuild': {
      const kinds: IndexKind[] = []
      if (change.channels.includes('vectors') || change.channels.includes('lexical')) kinds.push('hybrid')
      if (change.channels.includes('derived_graph') || change.channels.includes('entity_vectors')) kinds.push('graphrag')
      if (change.channels.includes('derived_episodes')) kinds.push('episodic')
      return kinds
    }
  }
}

/** The documents a change may have changed, for the change log; undefined: unknown (the whole namespace). */
export function changedDocuments(change: Change): DocumentChangeSet | undefined {
  if (change.kind === 'rebuild') return { docIds: change.ids }
  if (change.kind !== 'documents') return undefined
  return { docIds: change.op === 'upsert' ? change.documents.map((d) => d.id) : change.ids }
}

/** The entries journals of earlier versions wrote (`journal/documents/`, `journal/episodes/`), as changes. */
export type LegacyEntry =
  | { op: 'ingest'; namespace: string; documents: DocumentInput[] }
  | { op: 'delete'; namespace: string; docIds: string[] }
  | { op: 'ingest'; namespace: string; body: unknown }
  | { op: 'delete'; namespace: string; ids: string[] }

export function fromLegacyEntry(entry: LegacyEntry): WriteEntry {
  const { namespace } = entry
  if (entry.op === 'ingest') {
    return 'documents' in entry
      ? { namespace, change: { kind: 'documents', op: 'upsert', documents: entry.documents } }
      : { namespace, change: { kind: 'episodes', op: 'upsert', body: entry.body } }
  }
  return 'docIds' in entry
    ? { namespace, change: { kind: 'documents', op: 'delete', ids: entry.docIds } }
    : { namespace, change: { kind: 'episodes', op: 'delete', ids: entry.ids } }
}
