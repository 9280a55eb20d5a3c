import type { LlmExtractionConfig } from '../../config.js'
import type { RecallMetrics } from '../../metrics.js'
import { LlmExtractor } from './extractor.js'
import { loadExtractionPrompts } from './prompts.js'

/** The service's extractor (`LLM_*`, docs/llm-extraction.md): prompts read now, calls counted in the metrics. */
export function createLlmExtractor(config: LlmExtractionConfig, cacheDir: string, metrics?: RecallMetrics): LlmExtractor {
  return new LlmExtractor({
    client: {
      url: config.url, model: config.model, timeoutMs: config.timeoutMs, responseFormat: config.responseFormat,
      ...(config.apiKey ? { apiKey: config.apiKey } : {})
    },
    prompts: loadExtractionPrompts({
      ...(config.systemPromptFile ? { system: config.systemPromptFile } : {}),
      ...(config.userPromptFile ? { user: config.userPromptFile } : {})
    }),
    cacheDir,
    concurrency: config.concurrency,
    retries: config.retries,
    ...(metrics ? { onCall: (outcome, usage) => metrics.llmCall(outcome, usage) } : {})
  })
}
