/**
 * A small generation service in front of recall: it asks recall for a packed context over the typed client and
 * prints the prompt it would send to a model (no model is called).
 *
 *   npx tsx examples/generation-service.ts "咳嗽三周以上要做什么检查" [--mode hybrid] [--max-tokens 1500] [--url http://127.0.0.1:3000]
 */
import { parseArgs } from 'node:util'
import { createRecallClient, type ContextBody, type ContextResponse } from '../clients/typescript/index.js'

/** The prompt a generator would send: instructions, the numbered sources, the question. */
export function promptFor(question: string, answer: ContextResponse): string {
  const sources = answer.citations.map((c) => `[${c.marker}] ${c.source}`).join('\n')
  return [
    'Answer the question using only the sources below. Cite each claim with its marker, e.g. [1].',
    'If the sources do not answer it, say so.',
    '',
    answer.context.trimEnd(),
    '',
    `Sources:\n${sources}`,
    '',
    `Question: ${question}`
  ].join('\n')
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: { mode: { type: 'string', default: 'hybrid' }, 'max-tokens': { type: 'string', default: '1500' }, url: { type: 'string' } },
    allowPositionals: true
  })
  const question = positionals.join(' ') || '咳嗽三周以上要做什么检查'
  const apiKey = process.env.RECALL_API_KEY
  const recall = createRecallClient({ baseUrl: values.url ?? process.env.RECALL_URL ?? 'http://127.0.0.1:3000', ...(apiKey ? { apiKey } : {}) })
  const answer = await recall.context({
    mode: values.mode as ContextBody['mode'], query: question, top_k: 8, max_tokens: Number(values['max-tokens']), tokenizer: 'o200k_base', format: 'markdown'
  })
  console.log(promptFor(question, answer))
  const left = answer.manifest.filter((m) => m.status === 'dropped').map((m) => `${m.id} (${m.reason})`)
  console.error(`\n-- ${answer.tokens}/${answer.max_tokens} tokens of context, ${answer.citations.length} passages` +
    `${left.length > 0 ? `; left out: ${left.join(', ')}` : ''}; match_strength ${answer.match_strength}`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(`generation-service: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  })
}
