import { exclusiveOf, InProcessWriteLock, type Exclusive } from '../../src/corpus/write-lock.js'

/**
 * A write lock of this process, as the write path hands it to a writer: the tests that drive a document library or
 * the Episode writer directly (not through `corpus.write`) take their turns through it.
 */
export function inTurns(name = 'documents:default'): Exclusive {
  return exclusiveOf(new InProcessWriteLock(), name)
}
