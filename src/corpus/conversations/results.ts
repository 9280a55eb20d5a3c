/**
 * What a conversations write did: the type the change union and its callers read, apart from the writer
 * (src/corpus/appliers/writers/conversations.ts).
 */
export interface ConversationsWritten {
  conversations: number
  /** Sessions sent, and those of them whose Episode was written (the others derived as stored). */
  sessions: number
  sessions_written: number
  /** Turns the written sessions hold now. */
  turns: number
  /** Turn texts embedded by this write (the others kept their stored vectors). */
  turns_embedded: number
  facets: number
  entities: number
  vectors: number
}
