/**
 * The derived graph's part of a document write: what each written document contributes (derived from the chunks
 * the library stores for it), and nothing for a deleted one. docs/derivation.md.
 */
import { readFileSync } from 'node:fs'
import { derivationOptions, type DerivationOptions } from '../derive/options.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { Change } from './changes.js'
import { derivedContribution, storedChunksOf } from './derived-contribution.js'
import type { DocumentLibraryView } from './document-views.js'

const NOTHING: KgContribution = { entities: [], relations: [] }

/** The documents a documents change names. */
export function documentIdsOf(change: Extract<Change, { kind: 'documents' }>): string[] {
  return change.op === 'delete' ? [...change.ids] : change.documents.map((doc) => doc.id)
}

/**
 * What each of `docIds` contributes as the library holds it now (nothing for a document it does not hold). Derived
 * from the stored chunks, not from the change: of two writes of one document, whichever derives last derives the
 * stored version, whatever order their derived writes take.
 */
export function contributionsOf(docIds: readonly string[], library: DocumentLibraryView | undefined, options: DerivationOptions): Map<string, KgContribution> {
  return new Map(docIds.map((id) => {
    const chunks = storedChunksOf(id, library)
    return [id, chunks.length === 0 ? NOTHING : derivedContribution(chunks, options)] as const
  }))
}

/**
 * The derivation options of the service: the defaults with `overrides`, and the terms of `dictionaryFile` (one a line,
 * `#` comments). Read once, when the services are built: a missing file fails the start, naming it.
 */
export function loadDerivationOptions(dictionaryFile: string | undefined, overrides: Partial<DerivationOptions> = {}): DerivationOptions {
  if (!dictionaryFile) return derivationOptions(overrides)
  const terms = readFileSync(dictionaryFile, 'utf8').split(/\r?\n/).map((line) => line.replace(/#.*/, '').trim()).filter((t) => t !== '')
  return derivationOptions({ ...overrides, userDictionary: terms })
}
