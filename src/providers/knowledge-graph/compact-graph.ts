/**
 * The embedded knowledge graph's compact snapshot (store format 2): every item in id order, an imported one whole, a
 * derived one as its parts' slots as the store holds them (`DerivedItem.compactSlots`), with document ids and types
 * written once in tables before the items. Loading it reads a row at a time (`compact-stream.ts`: a snapshot at a
 * million chunks is longer than V8's longest string) and restores those slots as they are, with no part built as an
 * object on the way; a format-1 snapshot (the whole items, each with its `derived_from` parts, as JSON) is still read,
 * and the next fold writes it in this form.
 */
import type { SnapshotPayload } from '../embedded/snapshot-stream.js'
import type { KgEntity, KgRelation } from './port.js'

/** A derived entity: its id, its name when no part gives one, its name (a part's 0 stands for it), its parts' slots. */
export type CompactEntity = [id: string, fallbackName: string, name: string, slots: unknown[]]
/** A derived relation: its id, its ends, its type (an index into `types`), its parts' slots. */
export type CompactRelation = [id: string, source: string, target: string, type: number, slots: unknown[]]

export interface CompactGraph {
  docs: string[]
  types: string[]
  entities: Array<KgEntity | CompactEntity>
  relations: Array<KgRelation | CompactRelation>
}

/** What starts a compact payload: a zero byte, which no JSON text starts with, so a format-1 payload is never taken for one. */
const MAGIC = Buffer.from([0, 0x4b, 0x47, 0x32]) // \0KG2

export function encodeCompactGraph(graph: CompactGraph): Buffer {
  return Buffer.concat([MAGIC, Buffer.from(JSON.stringify(graph), 'utf8')])
}

/** Whether a snapshot payload is in the compact form (else it is a format-1 payload's JSON). */
export function isCompactPayload(payload: SnapshotPayload): boolean {
  return payload.startsWith(MAGIC)
}
