/**
 * The int8 pool's quantization (src/providers/vector-store/int8-quantize.ts) beside the plain loop it replaced (a
 * branch per value for the largest magnitude, `Math.round` per value), on 100,000 random unit vectors of 512
 * dimensions: CPU nanoseconds a value, rounds alternating, and whether the two wrote the same bytes and scales.
 * A 1M-chunk start-up quantizes each distinct vector once (issue 44). Writes bench/results/int8-quantize.json.
 *
 *   npx tsx bench/int8-quantize.ts [--rounds 4] [--out F]
 */
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { quantize } from '../src/providers/vector-store/int8-quantize.js'

const DIMS = 512
const VECTORS = 100_000

function plainLoop(vector: Float32Array, into: Int8Array, at: number): number {
  let max = 0
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!
    const magnitude = x < 0 ? -x : x
    if (magnitude > max) max = magnitude
  }
  if (max === 0) {
    into.fill(0, at, at + vector.length)
    return 0
  }
  const inverse = 127 / max
  for (let i = 0; i < vector.length; i++) into[at + i] = Math.round(vector[i]! * inverse)
  return max / 127
}

function randomUnitVectors(): Float32Array {
  let seed = 12345
  const random = () => ((seed = Math.imul(seed, 48271) % 0x7fffffff) & 0xffffff) / 0x1000000 - 0.5
  const all = new Float32Array(DIMS * VECTORS)
  for (let v = 0; v < VECTORS; v++) {
    const row = all.subarray(v * DIMS, (v + 1) * DIMS)
    let norm = 0
    for (let i = 0; i < DIMS; i++) norm += (row[i] = random()) ** 2
    for (let i = 0; i < DIMS; i++) row[i]! /= Math.sqrt(norm)
  }
  return all
}

function run(f: typeof quantize, vectors: Float32Array, into: Int8Array, scales: Float32Array): number {
  const before = process.cpuUsage()
  for (let v = 0; v < VECTORS; v++) scales[v] = f(vectors.subarray(v * DIMS, (v + 1) * DIMS), into, v * DIMS)
  const used = process.cpuUsage(before)
  return ((used.user + used.system) * 1000) / (VECTORS * DIMS)
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '4' }, out: { type: 'string', default: 'bench/results/int8-quantize.json' } } })
  const vectors = randomUnitVectors()
  const ours = { bytes: new Int8Array(DIMS * VECTORS), scales: new Float32Array(VECTORS) }
  const plain = { bytes: new Int8Array(DIMS * VECTORS), scales: new Float32Array(VECTORS) }
  const rounds: { plain_ns_a_value: number; ours_ns_a_value: number }[] = []
  for (let r = 0; r < Number(values.rounds); r++) {
    const p = run(plainLoop, vectors, plain.bytes, plain.scales)
    const o = run(quantize, vectors, ours.bytes, ours.scales)
    rounds.push({ plain_ns_a_value: Math.round(p * 100) / 100, ours_ns_a_value: Math.round(o * 100) / 100 })
    console.log(JSON.stringify(rounds.at(-1)))
  }
  const sameBytes = Buffer.compare(Buffer.from(ours.bytes.buffer), Buffer.from(plain.bytes.buffer)) === 0
  const sameScales = Buffer.compare(Buffer.from(ours.scales.buffer), Buffer.from(plain.scales.buffer)) === 0
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const result = {
    generated_by: 'bench/int8-quantize.ts', at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, load_average: loadavg().map((x) => Math.round(x * 10) / 10) },
    vectors: VECTORS, dims: DIMS, rounds,
    median_ratio_ours_to_plain: Math.round((median(rounds.map((r) => r.ours_ns_a_value)) / median(rounds.map((r) => r.plain_ns_a_value))) * 1000) / 1000,
    same_bytes: sameBytes, same_scales: sameScales
  }
  await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)
  console.log(JSON.stringify({ ratio: result.median_ratio_ours_to_plain, sameBytes, sameScales }))
}

await main()
