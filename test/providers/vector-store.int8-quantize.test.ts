import { describe, expect, it } from 'vitest'
import { quantize } from '../../src/providers/vector-store/int8-quantize.js'

/** The definition: every value `Math.round(x × 127 / max)` with `max` the largest magnitude, the scale `max / 127`. */
function byDefinition(vector: Float32Array): { values: number[]; scale: number } {
  let max = 0
  for (const x of vector) if (Math.abs(x) > max) max = Math.abs(x)
  if (max === 0) return { values: [...vector].map(() => 0), scale: 0 }
  return { values: [...vector].map((x) => Math.round(x * (127 / max)) | 0), scale: max / 127 }
}

function check(vector: Float32Array, at = 3): void {
  const into = new Int8Array(at + vector.length + 2).fill(99)
  const scale = quantize(vector, into, at)
  const expected = byDefinition(vector)
  expect(scale).toBe(expected.scale)
  expect([...into.subarray(at, at + vector.length)]).toEqual(expected.values)
  // nothing written around the row
  expect([...into.subarray(0, at), ...into.subarray(at + vector.length)]).toEqual(new Array(at + 2).fill(99))
}

describe('int8 quantization', () => {
  it('rounds halves as Math.round does (up), at a scale of exactly one', () => {
    // the largest magnitude is 127, so each value is its own y: the halves land exactly on .5
    const vector = new Float32Array([127, -2.5, 2.5, -0.5, 0.5, 126.5, -126.5, 1.5, -1.5, 0.49999997, -0.49999997, -0, 0, 3.75, -3.25])
    check(vector)
    const into = new Int8Array(vector.length)
    quantize(vector, into, 0)
    expect([...into.subarray(1, 9)]).toEqual([-2, 3, 0, 1, 127, -126, 2, -1])
  })

  it('takes the largest magnitude when it is negative', () => {
    check(new Float32Array([0.25, -1, 0.5, -0.125]))
    const into = new Int8Array(4)
    expect(quantize(new Float32Array([0.25, -1, 0.5, -0.125]), into, 0)).toBe(1 / 127)
    expect([...into]).toEqual([32, -127, 64, -16])
  })

  it('answers a zero scale and zero values for a zero vector', () => {
    check(new Float32Array(16))
  })

  it('matches the definition on unit vectors like the model gives', () => {
    let seed = 7
    const random = () => ((seed = Math.imul(seed, 48271) % 0x7fffffff) & 0xffff) / 0x10000 - 0.5
    for (let n = 0; n < 200; n++) {
      const v = new Float32Array(512).map(() => random() * (n % 3 === 0 ? 1e-3 : 1))
      let norm = 0
      for (const x of v) norm += x * x
      check(v.map((x) => x / Math.sqrt(norm)), n % 5)
    }
  })
})
