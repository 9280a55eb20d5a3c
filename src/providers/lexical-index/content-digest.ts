/**
 * An order-free digest of a set of documents as the embedded index compares them in `sync`: each document's id and the
 * content hash of its text (segment.ts, `contentHash`). Equal digests mean the same ids with the same texts (within the
 * content hash's own 64 bits, which `sync` already trusts), however the documents are spread over segments or ordered.
 */
import { contentHash } from './segment.js'

export class ContentDigest {
  #count = 0
  readonly #lanes = new Uint32Array(4)

  /** Adds a document: its id's code units `units[from .. to)`, its text's content hash. */
  addUnits(units: ArrayLike<number>, from: number, to: number, h1: number, h2: number): void {
    this.#add((i) => units[i]!, from, to, h1, h2)
  }

  add(id: string, text: string): void {
    const [h1, h2] = contentHash(text)
    this.#add((i) => id.charCodeAt(i), 0, id.length, h1, h2)
  }

  /** `count:` and four hex lanes: sums of mixed words, so the order of the documents does not count. */
  get value(): string {
    return `${this.#count}:${[...this.#lanes].map((x) => x.toString(16).padStart(8, '0')).join('')}`
  }

  #add(unit: (i: number) => number, from: number, to: number, h1: number, h2: number): void {
    let a = 0x9e3779b9
    let b = 0x85ebca6b
    for (let i = from; i < to; i++) {
      const c = unit(i)
      a = Math.imul(a ^ c, 0x27d4eb2d)
      b = Math.imul(b ^ c, 0x165667b1)
    }
    this.#mix(a ^ h1, b ^ h2)
  }

  #mix(x: number, y: number): void {
    x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) ^ Math.imul(y ^ (y >>> 13), 0xc2b2ae35)
    y = Math.imul(y ^ (y >>> 16), 0x85ebca6b) ^ Math.imul(x ^ (x >>> 13), 0xc2b2ae35)
    const lanes = this.#lanes
    lanes[0] = lanes[0]! + (x >>> 0)
    lanes[1] = lanes[1]! + (y >>> 0)
    lanes[2] = lanes[2]! + (Math.imul(x ^ (y >>> 7), 0x27d4eb2d) >>> 0)
    lanes[3] = lanes[3]! + (Math.imul(y ^ (x >>> 11), 0x165667b1) >>> 0)
    this.#count += 1
  }
}
