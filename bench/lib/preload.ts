/** Writes a corpus into the stores a configuration names, through the write path, with stand-in passage vectors. */
import { loadConfig } from '../../src/config.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import { openServices } from '../../src/services.js'
import { DOCUMENTS_ONLY } from './corpus.js'
import { standIn } from './synthetic.js'

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

/** Passages from the stand-in (the bulk load only; the servers embed with the real model). */
const standInEmbedder: Embedder = {
  model: 'bge-small-zh-v1.5', dimensions: 512,
  embedQueries: async () => { throw new Error('the bulk load embeds no query') },
  embedPassages: async (texts) => texts.map(standIn),
  health: async () => ({ ok: true }) as never,
  close: async () => {}
}

/**
 * Writes `docs` into namespace `namespace` of the stores `env` configures, through the write path, then closes them; the
 * passages are embedded by `embedder` (default the stand-in).
 */
export async function preload(
  env: Record<string, string>, docs: readonly { id: string; text: string }[], embedder: Embedder = standInEmbedder, namespace = 'default'
): Promise<number> {
  const config = loadConfig({ ...DOCUMENTS_ONLY, ...env })
  const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
  const started = performance.now()
  try {
    for (let i = 0; i < docs.length; i += 1000) {
      // A re-sent batch replaces the same ids. Once, here, a kept-alive connection the server had just closed
      // failed an upsert with EPIPE (the vector store does not retry writes).
      for (let attempt = 1; ; attempt++) {
        try {
          await services.writePath.write(namespace, { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 1000) })
          break
        } catch (error) {
          if (attempt >= 3) throw error
          log(`preload: batch ${i / 1000} failed (${error instanceof Error ? error.message : String(error)}), again`)
        }
      }
    }
  } finally {
    await services.close()
  }
  return (performance.now() - started) / 1000
}

