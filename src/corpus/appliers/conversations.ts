/**
 * The conversations applier: `POST /ingest/conversations`, `DELETE /conversations/{id}` written as derived Episodes
 * (docs/conversations.md) under the `episodes:` lock the write path hands it.
 */
import type { DerivationOptions } from '../../derive/options.js'
import type { Change } from '../changes.js'
import { readConversations } from '../conversations/body.js'
import type { ConversationsWritten } from '../conversations/results.js'
import { deleteConversations, upsertConversations } from './writers/conversations.js'
import type { EpisodicIngestPorts } from './writers/episode-graphs.js'
import type { Exclusive } from '../write-lock.js'

type ConversationsChange = Extract<Change, { kind: 'conversations' }>

export async function applyConversations(
  ports: EpisodicIngestPorts, namespace: string, change: ConversationsChange,
  options: { collectionPrefix: string; exclusive: Exclusive; derivation: DerivationOptions }
): Promise<ConversationsWritten | { deleted: string[] }> {
  const { collectionPrefix, exclusive } = options
  if (change.op === 'delete') return deleteConversations(ports, change.ids, { namespace, collectionPrefix, exclusive })
  return upsertConversations(ports, readConversations(change.body), { namespace, collectionPrefix, exclusive, derivation: options.derivation })
}
