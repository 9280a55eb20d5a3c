import { createHash } from 'node:crypto'
import { DEFAULT_NAMESPACE } from '../namespace.js'

/** Namespace of our point ids: point id = UUIDv5(this namespace, our id). Fixed forever: changing it orphans every stored point. */
export const POINT_ID_NAMESPACE = 'e07e4d4b-13aa-4f62-9455-16570e8b529c'

/** RFC 9562 name-based UUID, version 5 (SHA-1), of `name` in UTF-8 under `namespace`. */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex')
  if (ns.length !== 16) throw new RangeError(`namespace ${namespace} is not a UUID`)
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16)
  bytes[6] = (bytes[6]! & 0x0f) | 0x50
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * The Qdrant point id of one of our ids in a namespace: the UUIDv5 of the id under the namespace's own UUID,
 * itself the UUIDv5 of its name under {@link POINT_ID_NAMESPACE}, except for `default`, whose UUID is
 * POINT_ID_NAMESPACE itself, so that points written before namespaces existed keep their ids.
 */
export function pointIdOf(id: string, namespace: string): string {
  return uuidV5(id, namespace === DEFAULT_NAMESPACE ? POINT_ID_NAMESPACE : uuidV5(namespace, POINT_ID_NAMESPACE))
}
