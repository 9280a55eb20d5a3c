/**
 * The model's share of one write in bench/write-path.ts: its document's three chunks embedded as this tree embeds them
 * (after the contextual header, `passageText`) and as they are (the text alone, as before the header), alternately, 60
 * times each, in one process with the real model. Writes bench/results/write-path-header-model.json.
 *
 *   npx tsx bench/write-path-header.ts
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { modelDir } from './lib/corpus.js'
// the document bench/write-path.ts writes
const text = (i: number) => `# 第 ${i} 份值班说明\n\n夜间告警由二线值班处理，编号 w${i}。\n\n## 升级\n\n十五分钟无人响应则升级到三线，编号 w${i}。\n\n## 复盘\n\n每次升级都要在周会上复盘，编号 w${i}。`
const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
const chunks = chunkDocument({ id: 'd', text: text(1) })
const withHeader = chunks.map(passageText)
const bare = chunks.map((c) => c.text)
await model.embedPassages(bare); await model.embedPassages(withHeader)
const t: Record<string, number[]> = { bare: [], header: [] }
for (let i = 0; i < 60; i++) {
  for (const [k, xs] of (i % 2 ? [['bare', bare], ['header', withHeader]] : [['header', withHeader], ['bare', bare]]) as [string, string[]][]) {
    const s = performance.now(); await model.embedPassages(xs.map((x) => x.replace('1', String(i)))); t[k]!.push(performance.now() - s)
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!.toFixed(2)
const out = { at: new Date().toISOString(), load_1m: loadavg()[0], passages_with_header: withHeader, passages_alone: bare, runs: 60, model_ms_p50: { alone: Number(med(t.bare!)), with_header: Number(med(t.header!)) }, ratio: Number((Number(med(t.header!)) / Number(med(t.bare!))).toFixed(2)) }
console.log(JSON.stringify(out))
await writeFile('bench/results/write-path-header-model.json', `${JSON.stringify(out, null, 2)}\n`)
process.exit(0)
