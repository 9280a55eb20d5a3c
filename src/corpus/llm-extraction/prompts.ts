/** The extraction prompts, read from their files once, at start-up. docs/llm-extraction.md. */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { TEXT_PLACEHOLDER, type ExtractionPrompts } from '../../derive/llm/prompt.js'

/** The `prompts/extraction/` folder of this install (the defaults of `LLM_SYSTEM_PROMPT_FILE` and `LLM_USER_PROMPT_FILE`). */
function defaultPromptsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'prompts', 'extraction'))) return join(dir, 'prompts', 'extraction')
    const parent = dirname(dir)
    if (parent === dir) return fileURLToPath(new URL('../../../prompts/extraction', import.meta.url))
    dir = parent
  }
}

/** Both prompts from their files; a missing file, or a user template without `{{text}}`, fails the start naming it. */
export function loadExtractionPrompts(files: { system?: string; user?: string }): ExtractionPrompts {
  const systemFile = files.system ?? join(defaultPromptsDir(), 'system.md')
  const userFile = files.user ?? join(defaultPromptsDir(), 'user.md')
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8')
    } catch (error) {
      throw new Error(`the extraction prompt ${file} cannot be read: ${(error as Error).message}`)
    }
  }
  const prompts = { system: read(systemFile), user: read(userFile) }
  if (!prompts.user.includes(TEXT_PLACEHOLDER)) throw new Error(`the extraction prompt ${userFile} has no ${TEXT_PLACEHOLDER}: the model would not see the chunk`)
  return prompts
}
