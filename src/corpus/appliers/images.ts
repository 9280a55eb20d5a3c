/**
 * The images applier: a documents write's pictures (`documents[].images`) written to the namespace's image collection
 * of the vector store, each document's set replacing the one it had (a document sent without pictures has none after),
 * and a documents delete deleting its documents' pictures. Pictures are judged and embedded before the `documents:`
 * lock is taken; only the store write runs under it. docs/formats.md, "Pictures".
 */
import type { Embedder } from '../../providers/embedder/port.js'
import type { VectorRecord, VectorStore } from '../../providers/vector-store/port.js'
import type { Change } from '../changes.js'
import { imagePayload, imageRecordId, type ImagePayload } from '../images/image-records.js'
import { judgePicture, type PictureLimits } from '../images/pictures.js'
import type { Exclusive } from '../write-lock.js'
import type { ImagesReport } from '../images/images-report.js'


type DocumentsChange = Extract<Change, { kind: 'documents' }>

export interface ImagesApplyOptions {
  /** The image collection's full name. */
  collection: string
  limits: PictureLimits
  /** The `documents:` lock of the namespace. */
  exclusive: Exclusive
  /** Documents the documents applier did not write (skipped: no text): their pictures are left as they were. */
  notWritten?: ReadonlySet<string>
}

export async function applyImages(
  ports: { vectors: VectorStore; embedder: Embedder }, namespace: string, change: DocumentsChange, options: ImagesApplyOptions
): Promise<ImagesReport> {
  const { vectors, embedder } = ports
  const { collection, exclusive } = options
  const report: ImagesReport = { written: 0, unchanged: 0, small: 0, removed: 0, refused: [] }
  if (change.op === 'delete') {
    const held = await heldCount(vectors, collection, namespace, change.ids)
    if (held === 0) return report
    await exclusive(async (lease) => {
      lease.assertHeld()
      await vectors.write(collection, namespace, { deleteDocIds: change.ids })
    })
    return { ...report, removed: held }
  }
  // a write of documents without pictures into a namespace holding none reads no more than this count
  if (change.documents.every((d) => !d.images?.length) && await vectors.count(collection, namespace) === 0) return report
  const writes: Array<{ docId: string; records: VectorRecord[] }> = []
  for (const doc of change.documents) {
    if (options.notWritten?.has(doc.id)) continue
    const records = new Map<string, ImagePayload>()
    for (const [index, input] of (doc.images ?? []).entries()) {
      const judged = await judgePicture(Buffer.from(input.data, 'base64'), options.limits)
      if (judged.outcome === 'small') report.small += 1
      else if (judged.outcome === 'refused') report.refused.push({ document: doc.id, index, reason: judged.reason })
      if (judged.outcome === 'kept') {
        const id = imageRecordId(doc.id, judged.hash)
        // the same picture twice in a document is one record, described where it first appears
        if (!records.has(id)) records.set(id, imagePayload(doc.id, input, judged, input.ocr_text))
      }
    }
    const held = new Map<string, string>()
    for await (const { id, payload } of vectors.scroll(collection, namespace, [doc.id])) held.set(id, payload.text)
    const same = held.size === records.size && [...records].every(([id, p]) => held.get(id) === p.text)
    if (same) {
      report.unchanged += records.size
      continue
    }
    const kept = await vectors.vectorsOf(collection, namespace, [...records.keys()].filter((id) => held.get(id) === records.get(id)!.text))
    const toEmbed = [...records].filter(([id]) => !kept.has(id))
    const embedded = toEmbed.length > 0 ? await embedder.embedPassages(toEmbed.map(([, p]) => p.text)) : []
    const fresh = new Map(toEmbed.map(([id], i) => [id, embedded[i]!]))
    report.written += toEmbed.length
    report.unchanged += kept.size
    report.removed += [...held.keys()].filter((id) => !records.has(id)).length
    writes.push({ docId: doc.id, records: [...records].map(([id, payload]) => ({ id, vector: kept.get(id) ?? fresh.get(id)!, payload })) })
  }
  if (writes.length === 0) return report
  await vectors.ensureCollection(collection, embedder.dimensions)
  await exclusive(async (lease) => {
    for (const { docId, records } of writes) {
      lease.assertHeld()
      await vectors.write(collection, namespace, { deleteDocIds: [docId], upsert: records })
    }
  })
  return report
}

async function heldCount(vectors: VectorStore, collection: string, namespace: string, docIds: readonly string[]): Promise<number> {
  let n = 0
  for await (const _ of vectors.scroll(collection, namespace, docIds)) n += 1
  return n
}
