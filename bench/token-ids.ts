/**
 * Collisions of the lexical token ids (murmur3_32 of the token) on the CMRC 2018 trial vocabulary: every token
 * the service's analyzer makes of the paragraphs, their titles and the questions. Writes
 * bench/results/token-ids.json. Run: npx tsx bench/token-ids.ts
 */
import { readFile, writeFile } from 'node:fs/promises'
import { CMRC_PATH } from './lib/cmrc.js'
import { analyze } from '../src/kernel/cjk-analyzer.js'
import { TOKEN_ID_SCHEME, tokenId } from '../src/providers/lexical-index/token-id.js'

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { question: string }[] }[] }[]
}

async function main(): Promise<void> {
  const squad = JSON.parse(await readFile(CMRC_PATH, 'utf8')) as Squad
  const vocabulary = new Set<string>()
  const add = (text: string) => { for (const t of analyze(text)) vocabulary.add(t) }
  for (const article of squad.data) {
    add(article.title)
    for (const p of article.paragraphs) {
      add(p.context)
      for (const qa of p.qas) add(qa.question)
    }
  }
  const byId = new Map<number, string[]>()
  for (const t of vocabulary) {
    const id = tokenId(t)
    const held = byId.get(id)
    if (held) held.push(t)
    else byId.set(id, [t])
  }
  const colliding = [...byId.entries()].filter(([, ts]) => ts.length > 1).map(([id, tokens]) => ({ id, tokens }))
  const v = vocabulary.size
  const pairs = colliding.reduce((n, c) => n + (c.tokens.length * (c.tokens.length - 1)) / 2, 0)
  const result = {
    scheme: TOKEN_ID_SCHEME,
    dataset: 'cmrc2018_trial: titles, paragraphs and questions, analyzed with the cjk-bigram analyzer',
    vocabulary: v,
    distinct_ids: byId.size,
    colliding_pairs: pairs,
    tokens_in_a_collision: colliding.reduce((n, c) => n + c.tokens.length, 0),
    expected_pairs_uniform: Math.round(((v * (v - 1)) / 2 / 2 ** 32) * 1000) / 1000,
    collisions: colliding
  }
  await writeFile(new URL('./results/token-ids.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
  console.log(JSON.stringify(result))
}

await main()
