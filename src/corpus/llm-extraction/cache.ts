/**
 * Extractions already paid for, one file per chunk content, model and prompt (`DATA_DIR/llm-extraction/`): a chunk
 * written again unchanged, or the same text in another document or namespace, asks the model nothing.
 * docs/llm-extraction.md.
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChunkExtraction } from '../../derive/llm/answer.js'

/** The cache key: everything the answer depends on (the text, what the prompt shows of its place, model, prompts, output format). */
export function extractionKey(parts: { model: string; promptsHash: string; responseFormat: string; heading: string; text: string }): string {
  return createHash('sha256').update(JSON.stringify([parts.model, parts.promptsHash, parts.responseFormat, parts.heading, parts.text])).digest('hex')
}

export class ExtractionCache {
  constructor(readonly dir: string) {}

  async get(key: string): Promise<ChunkExtraction | undefined> {
    try {
      return JSON.parse(await readFile(this.#path(key), 'utf8')) as ChunkExtraction
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      // A file cut short by a crash is no extraction: the model is asked again and the file replaced.
      if (error instanceof SyntaxError) return undefined
      throw error
    }
  }

  async put(key: string, extraction: ChunkExtraction): Promise<void> {
    const path = this.#path(key)
    await mkdir(join(this.dir, key.slice(0, 2)), { recursive: true })
    // Written aside, then renamed: a reader sees the whole file or none.
    const temporary = `${path}.${randomUUID()}.tmp`
    await writeFile(temporary, JSON.stringify(extraction))
    await rename(temporary, path)
  }

  #path(key: string): string {
    return join(this.dir, key.slice(0, 2), `${key}.json`)
  }
}
