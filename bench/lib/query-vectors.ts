import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { Embedder } from '../../src/providers/embedder/port.js'

/**
 * `count` vectors of `dims` kept in the file `path` across runs: read when the file holds that many, else made by
 * `fill` (which sets each vector into the flat array it is given) and written (a file of another size is made again).
 */
export async function cachedVectorFile(path: string, count: number, dims: number, fill: (flat: Float32Array) => Promise<void>): Promise<Float32Array> {
  try {
    const buf = await readFile(path)
    const flat = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)
    if (flat.length === count * dims) return flat
  } catch {
    // no file yet: made below
  }
  const flat = new Float32Array(count * dims)
  await fill(flat)
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, Buffer.from(flat.buffer))
  return flat
}

/**
 * The model's query vectors for `questions`, one at a time as a request would embed them, kept in
 * `dir/query-vectors-<count>.f32` across runs (a file of another size is made again).
 */
export async function cachedQueryVectors(model: Embedder, questions: readonly string[], dir: string): Promise<Map<string, Float32Array>> {
  const dims = model.dimensions
  const flat = await cachedVectorFile(join(dir, `query-vectors-${questions.length}.f32`), questions.length, dims, async (out) => {
    for (let i = 0; i < questions.length; i++) out.set((await model.embedQueries([questions[i]!]))[0]!, i * dims)
  })
  return new Map(questions.map((q, i) => [q, flat.slice(i * dims, (i + 1) * dims)]))
}
