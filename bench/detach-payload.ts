/**
 * What a vector write keeps of each payload (src/providers/vector-store/payload.ts `detachPayload`) beside a JSON round
 * trip alone (the write did a round trip and then put the writer's strings back into it): CPU microseconds a payload,
 * on 20,000 chunk payloads as recall writes them (CMRC-sized Chinese text, versions, a heading path, metadata), rounds
 * alternating. Writes bench/results/detach-payload.json.
 *
 *   npx tsx bench/detach-payload.ts [--rounds 4] [--out F]
 */
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { detachPayload, type VectorPayload } from '../src/providers/vector-store/payload.js'

const PAYLOADS = 20_000

function payloads(): VectorPayload[] {
  const sentence = '网关在转发请求之前先完成鉴权，鉴权失败的请求直接返回四零一。'
  return Array.from({ length: PAYLOADS }, (_, i) => ({
    doc_id: `doc-${Math.floor(i / 8)}`, text: `${i} ${sentence.repeat(8 + (i % 7))}`, chunk_index: i % 8, source: `docs/guide-${i % 50}.md`,
    title: '网关指南', heading_path: ['网关', `第 ${i % 8} 节`], anchor: `section-${i % 8}`,
    versions: { chunker: 'markdown-v3', analyzer: 'cjk-bigram-v2', model: 'bge-small-zh-v1.5' }, fingerprint: (i * 2654435761 >>> 0).toString(16),
    metadata: { tags: ['gateway', 'auth'], year: 2024, draft: i % 2 === 0 }
  }))
}

function run(detach: (p: VectorPayload) => unknown, all: VectorPayload[]): number {
  const kept: unknown[] = new Array(all.length)
  const before = process.cpuUsage()
  for (let i = 0; i < all.length; i++) kept[i] = detach(all[i]!)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / all.length
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '4' }, out: { type: 'string', default: 'bench/results/detach-payload.json' } } })
  const all = payloads()
  const roundTrip = (p: VectorPayload) => JSON.parse(JSON.stringify(p)) as unknown
  const rounds: { round_trip_us: number; detach_us: number }[] = []
  for (let r = 0; r < Number(values.rounds); r++) {
    const trip = run(roundTrip, all)
    const detach = run(detachPayload, all)
    rounds.push({ round_trip_us: Math.round(trip * 100) / 100, detach_us: Math.round(detach * 100) / 100 })
    console.log(JSON.stringify(rounds.at(-1)))
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const result = {
    generated_by: 'bench/detach-payload.ts', at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, load_average: loadavg().map((x) => Math.round(x * 10) / 10) },
    payloads: PAYLOADS, rounds,
    median_ratio_detach_to_round_trip: Math.round((median(rounds.map((r) => r.detach_us)) / median(rounds.map((r) => r.round_trip_us))) * 1000) / 1000
  }
  await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)
  console.log(JSON.stringify({ ratio: result.median_ratio_detach_to_round_trip }))
}

await main()
