// Where a session thread's CPU goes in one query's run: transformers.js's tokenizer against ONNX Runtime's run, in this
// thread's own CPU time (process.threadCpuUsage), one query at a time with the query instruction, as a session does
// (issue 43 item 4: is anything beside the model worth cutting in the 16-client vector leg?).
//
//   CMRC_PATH=… tsx bench/session-run-split.ts [--queries 800] [--rounds 3] [--out bench/results/session-run-split.json]
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { InferenceSession, type Tensor } from 'onnxruntime-node'
import { modelFileOf, sessionOptionsOf } from '../src/providers/embedder/onnx-session.js'
import { BGE_ZH_QUERY_INSTRUCTION } from '../src/providers/embedder/vectors.js'
import { loadCmrc } from './lib/cmrc.js'

const { values } = parseArgs({ options: { queries: { type: 'string', default: '800' }, rounds: { type: 'string', default: '3' }, out: { type: 'string', default: 'bench/results/session-run-split.json' } } })
const folder = resolve('models', 'bge-small-zh-v1.5')
const { AutoTokenizer } = await import('@huggingface/transformers')
const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true })
const session = await InferenceSession.create(modelFileOf(folder), sessionOptionsOf({ threads: 1 }))
const { queries } = await loadCmrc()
const texts = queries.slice(0, Number(values.queries)).map((q) => BGE_ZH_QUERY_INSTRUCTION + q.query)
const cpuMs = (): number => {
  const used = process.threadCpuUsage()
  return (used.user + used.system) / 1000
}

const rounds: Array<{ tokenize_ms: number; run_ms: number; load: number }> = []
for (let r = 0; r < Number(values.rounds); r++) {
  let tokenize = 0
  let run = 0
  for (const text of texts) {
    const began = cpuMs()
    const encoded = tokenizer([text], { padding: true, truncation: true, max_length: 512 }) as Record<string, { ort_tensor: Tensor }>
    const feeds = Object.fromEntries(session.inputNames.map((name) => [name, encoded[name]!.ort_tensor]))
    const tokenized = cpuMs()
    await session.run(feeds)
    tokenize += tokenized - began
    run += cpuMs() - tokenized
  }
  rounds.push({ tokenize_ms: Number((tokenize / texts.length).toFixed(3)), run_ms: Number((run / texts.length).toFixed(3)), load: loadavg()[0]! })
  console.log(`round ${r + 1}: tokenizer ${rounds.at(-1)!.tokenize_ms} ms, ONNX Runtime run ${rounds.at(-1)!.run_ms} ms of this thread's CPU a query (load ${loadavg()[0]!.toFixed(1)})`)
}
await session.release()
writeFileSync(values.out, JSON.stringify({ bench: 'session-run-split', date: new Date().toISOString(), queries: texts.length, rounds }, null, 2) + '\n')
