/**
 * The extraction prompt: a system message and a user message template, read from files at start-up
 * (src/corpus/llm-extraction/prompts.ts), filled per chunk here. Pure. docs/llm-extraction.md.
 */
import { createHash } from 'node:crypto'

export interface ExtractionPrompts {
  system: string
  /** The user message; `{{heading}}` becomes the chunk's title and heading path, `{{text}}` its text. */
  user: string
}

/** What the user template must hold: without the chunk's text the model would have nothing to read. */
export const TEXT_PLACEHOLDER = '{{text}}'

export function userMessage(prompts: ExtractionPrompts, chunk: { text: string; heading: string }): string {
  // One pass, so that a chunk whose text holds `{{heading}}` is not filled twice.
  return prompts.user.replace(/\{\{(text|heading)\}\}/g, (_, name: string) => (name === 'text' ? chunk.text : chunk.heading))
}

/** A digest of the prompts: part of the cache key, so that an edited prompt asks the model again. */
export function promptsHash(prompts: ExtractionPrompts): string {
  return createHash('sha256').update(JSON.stringify([prompts.system, prompts.user])).digest('hex')
}
