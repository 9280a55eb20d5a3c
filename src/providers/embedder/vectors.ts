import { LOCAL_MODELS } from './models.js'

/** bge-*-zh-v1.5's retrieval instruction, put before queries only (docs/api.md, "Hybrid in detail"). */
export const BGE_ZH_QUERY_INSTRUCTION = LOCAL_MODELS['bge-small-zh-v1.5'].queryInstruction
/** bge-*-en-v1.5's retrieval instruction, put before queries only. */
export const BGE_EN_QUERY_INSTRUCTION = LOCAL_MODELS['bge-small-en-v1.5'].queryInstruction

/**
 * Scales a vector to unit L2 norm, summing in float64 so the float32 result is within 1e-6 of norm 1.
 * Throws on a zero or non-finite vector, which no embedding model should produce.
 */
export function normalizeL2(values: ArrayLike<number>): Float32Array {
  let sum = 0
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number
    sum += v * v
  }
  const norm = Math.sqrt(sum)
  if (!Number.isFinite(norm) || norm === 0) throw new RangeError(`cannot normalise a vector of norm ${norm}`)
  const out = new Float32Array(values.length)
  for (let i = 0; i < values.length; i++) out[i] = (values[i] as number) / norm
  return out
}
