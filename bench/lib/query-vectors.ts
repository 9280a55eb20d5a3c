import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Embedder } from '../../src/providers/embedder/port.js'

/**
 * The model's query vectors for `questions`, one at a time as a request would embed them, kept in
 * `dir/query-vectors-<count>.f32` across runs (a file of another size is made again).
 */
export async function cachedQueryVectors(model: Embedder, questions: readonly string[], dir: string): Promise<Map<string, Float32Array>> {
  const dims = model.dimensions
  const path = join(dir, `query-vectors-${questions.length}.f32`)
  let flat: Float32Array
  try {
    const buf = await readFile(path)
    flat = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4)
    if (flat.length !== questions.length * dims) throw new Error('stale')
  } catch {
    flat = new Float32Array(questions.length * dims)
    for (let i = 0; i < questions.length; i++) flat.set((await model.embedQueries([questions[i]!]))[0]!, i * dims)
    await mkdir(dir, { recursive: true })
    await writeFile(path, Buffer.from(flat.buffer))
  }
  return new Map(questions.map((q, i) => [q, flat.slice(i * dims, (i + 1) * dims)]))
}
