/**
 * `npm run ingest` over HTTP a second time: the files the namespace holds unchanged are found so by fingerprint
 * (`POST /documents/unchanged`) and their bodies are not sent (no ingest reaches the service), the report stays as
 * documented (every file `unchanged`, the same chunks, the generation the namespace holds: the first report's, or the
 * one the background entity-names write recorded after it); a changed file is sent and `replaced`;
 * `--resend` sends them all. The report (text and `--json`) carries what the written documents derived.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

let dir: string
let server: ServerProcess | undefined
const folder = () => join(dir, 'notes')

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-unchanged-'))
  await mkdir(folder())
  await writeFile(join(folder(), 'oncall.md'), '# 值班说明\n\n夜间告警由二线值班处理，平台组负责维护鉴权中间件。\n\n## 升级\n\n十五分钟无人响应则升级到值班经理。')
  await writeFile(join(folder(), 'travel.md'), '# 差旅标准\n\n一线城市住宿每晚不超过六百元，由财务部审核报销单据。')
  await writeFile(join(folder(), 'leave.txt'), '年假申请需提前三个工作日提交，由直属主管审批。')
  server = await startServer({ DATA_DIR: join(dir, 'data'), DEMO_DATA: 'false', RATE_LIMIT_MAX: '0' })
}, 300_000)
afterAll(async () => {
  await server?.kill()
  await rm(dir, { recursive: true, force: true })
})

interface Report {
  files: Array<{ file: string; outcome: string; chunks?: number }>
  counts: Record<string, number>
  chunks: number
  generation?: number
  derived?: { entities: number; relations: number; blocked: number }
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', '--url', server!.url, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let output = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('close', (code) => resolve({ code, stdout, output }))
  })
}
async function report(args: string[]): Promise<Report> {
  const r = await cli(['--json', ...args])
  expect(r.code, r.output).toBe(0)
  return JSON.parse(r.stdout) as Report
}
/** Ingests the service has counted, whatever their outcome (`recall_ingests_total`). */
async function ingests(): Promise<number> {
  const text = await (await fetch(`${server!.url}/metrics`)).text()
  return text.split('\n').filter((l) => l.startsWith('recall_ingests_total{')).reduce((n, l) => n + Number(l.split(' ').at(-1)), 0)
}
const outcomes = (r: Report) => Object.fromEntries(r.files.map((f) => [f.file.split('/').at(-1), f.outcome]))
/**
 * The namespace's generation once no document's entity vectors are pending: the entity-names write runs in the
 * background after an ingest answered, and records a generation of its own when it embeds names.
 */
async function settledGeneration(namespace: string): Promise<number> {
  for (let n = 0; n < 300; n++) {
    const list = await (await fetch(`${server!.url}/documents?namespace=${namespace}&status=true`)).json() as
      { documents: Array<{ index_status?: { entity_vectors?: { state: string } } }>; generation?: number }
    if (list.documents.every((d) => d.index_status?.entity_vectors?.state !== 'pending')) return list.generation!
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`entity vectors of ${namespace} still pending`)
}

describe('ingest CLI, a folder ingested again', () => {
  it('sends no body for the files held unchanged, and reports them as a re-sent body would', async () => {
    const first = await report(['--namespace', 'again', folder()])
    expect(first.counts).toMatchObject({ ingested: 3, replaced: 0, unchanged: 0 })
    const sent = await ingests()
    // the first report's generation, or the entity-names write's after it
    const settled = await settledGeneration('again')
    expect(settled).toBeGreaterThanOrEqual(first.generation!)

    const again = await report(['--namespace', 'again', folder()])
    expect(again.counts).toEqual({ ingested: 0, replaced: 0, unchanged: 3, skipped: 0, refused: 0 })
    expect(again.chunks).toBe(first.chunks)
    expect(again.files.map((f) => f.chunks)).toEqual(first.files.map((f) => f.chunks))
    expect(again.generation, 'nothing written since').toBe(settled)
    expect(again.derived, 'nothing was written, so nothing derived').toBeUndefined()
    expect(await ingests(), 'no ingest reached the service').toBe(sent)

    await writeFile(join(folder(), 'travel.md'), '# 差旅标准\n\n一线城市住宿每晚不超过七百元，由财务部审核报销单据。')
    const changed = await report(['--namespace', 'again', folder()])
    expect(outcomes(changed)).toEqual({ 'leave.txt': 'unchanged', 'oncall.md': 'unchanged', 'travel.md': 'replaced' })
    expect(await ingests(), 'one job: the changed file').toBe(sent + 1)
    expect(changed.generation).toBeGreaterThan(first.generation!)

    const resent = await report(['--namespace', 'again', '--resend', folder()])
    expect(resent.counts).toMatchObject({ unchanged: 3 })
    expect(await ingests(), '--resend sends the bodies, which the service finds unchanged').toBe(sent + 2)
  }, 240_000)

  it('reports what the written documents derived, as the graph holds it', async () => {
    const r = await report(['--namespace', 'solo', join(folder(), 'oncall.md')])
    const listed = await (await fetch(`${server!.url}/namespaces`)).json() as { namespaces: Array<{ namespace: string; entities: number; relations: number }> }
    const solo = listed.namespaces.find((n) => n.namespace === 'solo')!
    // one document in the namespace, nothing imported: its contribution is the whole graph
    expect(solo.entities).toBeGreaterThan(0)
    expect(r.derived).toMatchObject({ entities: solo.entities, relations: solo.relations, blocked: 0 })

    const text = await cli(['--namespace', 'solo-text', join(folder(), 'oncall.md')])
    expect(text.code, text.output).toBe(0)
    expect(text.stdout).toContain(`derived graph: ${solo.entities} entities, ${solo.relations} relations from the documents written`)
  }, 240_000)
})
