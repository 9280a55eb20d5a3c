import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

/**
 * Reference data the repository does not ship (third-party licences, size). Each file is found through
 * its own environment variable, else under `RECALL_SHARED_DIR`, else in `../shared` beside the
 * repository (the workspace CI runs in). A clone without any of them skips what needs the file.
 */
export const SHARED_DIR = resolve(process.env.RECALL_SHARED_DIR ?? resolve(import.meta.dirname, '../../../shared'))

export interface ReferenceFile {
  /** What the file is, for messages. */
  what: string
  /** The environment variable that names the file itself. */
  envVar: string
  path: string
  available: boolean
  /** One line: what is missing and how to supply it. */
  missing: string
}

function referenceFile(what: string, envVar: string, underShared: string): ReferenceFile {
  const given = process.env[envVar]
  const path = resolve(given !== undefined && given !== '' ? given : resolve(SHARED_DIR, underShared))
  return {
    what, envVar, path, available: existsSync(path),
    missing: `${what} is missing at ${path}: set ${envVar} to the file, or RECALL_SHARED_DIR to a folder holding ${underShared}`
  }
}

/** The CMRC 2018 trial split in SQuAD form (ymcui/cmrc2018 `squad-style-data/cmrc2018_trial.json`, CC BY-SA 4.0). */
export const CMRC_TRIAL = referenceFile('CMRC 2018 trial (SQuAD JSON)', 'CMRC_PATH', 'data/cmrc2018_trial.json')

/** Qdrant's OpenAPI document of the server version the adapter targets (`docs/redoc/master/openapi.json` of qdrant/qdrant). */
export const QDRANT_OPENAPI = referenceFile("Qdrant's OpenAPI document", 'QDRANT_OPENAPI_PATH', 'qdrant/openapi.json')

/**
 * The Qdrant server the test runs and benches start (`qdrant-run` with the binary, and its `VERSION`): `qdrant/`
 * under RECALL_SHARED_DIR or `../shared`. Without it, Qdrant-backed suites need QDRANT_URL or are skipped.
 */
export const QDRANT_SERVER_DIR = resolve(SHARED_DIR, 'qdrant')
