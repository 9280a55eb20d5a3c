import { describe } from 'vitest'
import { loadCmrc } from '../../bench/lib/cmrc.js'
import { CMRC_TRIAL, type ReferenceFile } from '../../bench/lib/reference-data.js'

export { CMRC_TRIAL, QDRANT_OPENAPI, QDRANT_SERVER_DIR,  type ReferenceFile } from '../../bench/lib/reference-data.js'

const announced = new Set<string>()

/**
 * `describe` when the reference file is there, else `describe.skip` (its tests count as skipped), with
 * one line saying what is missing and how to supply it. Under CI (`CI=true`), which has the files, a
 * missing one fails the run instead of skipping quietly.
 */
export function describeWith(ref: ReferenceFile): typeof describe {
  if (ref.available) return describe
  if (process.env.CI === 'true') throw new Error(`CI runs every suite: ${ref.missing}`)
  if (!announced.has(ref.path)) {
    announced.add(ref.path)
    console.warn(`SKIPPED: ${ref.missing}`)
  }
  return describe.skip as typeof describe
}

/**
 * The CMRC 2018 trial paragraphs in file order; none when the file is missing, so a module can read them at
 * import and gate the suites that use them with `describeWith(CMRC_TRIAL)`.
 */
export async function cmrcParagraphs(): Promise<string[]> {
  return CMRC_TRIAL.available ? (await loadCmrc()).documents.map((d) => d.text) : []
}
