/**
 * The derived graph's part of a document write: what each written document contributes (derived from the chunks
 * the library stores for it), and nothing for a deleted one. docs/derivation.md.
 */
import { readFileSync } from 'node:fs'
import { deriveDocument } from '../derive/document.js'
import { derivationOptions, type DerivationOptions } from '../derive/options.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { Change } from './changes.js'
import { chunkDocument } from './documents.js'

const NOTHING: KgContribution = { entities: [], relations: [] }

/** Each document a documents change names, with what it contributes after the change. */
export function contributionsOf(change: Extract<Change, { kind: 'documents' }>, options: DerivationOptions): Map<string, KgContribution> {
  if (change.op === 'delete') return new Map(change.ids.map((id) => [id, NOTHING]))
  return new Map(change.documents.map((doc) => [doc.id, deriveDocument(chunkDocument(doc), options)]))
}

/**
 * The derivation options of the service: the defaults, with the terms of `dictionaryFile` (one a line, `#` comments).
 * Read once, when the services are built: a missing file fails the start, naming it.
 */
export function loadDerivationOptions(dictionaryFile: string | undefined): DerivationOptions {
  if (!dictionaryFile) return derivationOptions()
  const terms = readFileSync(dictionaryFile, 'utf8').split(/\r?\n/).map((line) => line.replace(/#.*/, '').trim()).filter((t) => t !== '')
  return derivationOptions({ userDictionary: terms })
}
