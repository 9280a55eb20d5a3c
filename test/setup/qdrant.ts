import type {} from 'vitest' // brings the module into scope so the augmentation below merges
import type { TestProject } from 'vitest/node'
import { canStartQdrant, QDRANT_SKIP_LINE, startQdrant } from '../helpers/qdrant-server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * URL of the real Qdrant the whole run shares (`QDRANT_URL`, or a server started here from
     * QDRANT_SERVER_DIR, `../shared/qdrant/` by default); `''` when there is neither, and the Qdrant-gated
     * suites are skipped.
     */
    qdrantUrl: string
  }
}

/**
 * Starts one Qdrant 1.18.3 with a fresh storage folder for the whole test run, unless `QDRANT_URL` names one. Without
 * either, the Qdrant-gated suites skip with one line; under CI (`CI=true`) the run fails instead.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.QDRANT_URL
  if (given !== undefined && given !== '') {
    project.provide('qdrantUrl', given)
    return undefined
  }
  if (!canStartQdrant()) {
    if (process.env.CI === 'true') throw new Error(`CI runs every suite: ${QDRANT_SKIP_LINE}`)
    console.warn(`no Qdrant for this run: ${QDRANT_SKIP_LINE}`)
    project.provide('qdrantUrl', '')
    return undefined
  }
  const server = await startQdrant()
  project.provide('qdrantUrl', server.url)
  return async () => {
    await server.stop('SIGTERM', true)
  }
}
