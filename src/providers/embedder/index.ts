import { LocalEmbedder, type LocalEmbedderOptions } from './local.js'
import { OpenAICompatibleEmbedder, type OpenAICompatibleEmbedderOptions } from './openai.js'
import type { Embedder } from './port.js'

export type EmbedderOptions =
  | ({ backend: 'local' } & LocalEmbedderOptions)
  | ({ backend: 'openai' } & OpenAICompatibleEmbedderOptions)

/** The embedder the configuration names: the local ONNX model (`EMBEDDER=local`) or an OpenAI-compatible server. */
export function createEmbedder(options: EmbedderOptions): Embedder {
  switch (options.backend) {
    case 'local':
      return new LocalEmbedder(options)
    case 'openai':
      return new OpenAICompatibleEmbedder(options)
    default: {
      const unknown: never = options
      throw new TypeError(`unknown embedder backend ${JSON.stringify((unknown as { backend: unknown }).backend)}`)
    }
  }
}

export type { Embedder } from './port.js'
