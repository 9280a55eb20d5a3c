/**
 * Both embedded graphs open a snapshot whose payload is longer than V8's longest string (at a million chunks the
 * knowledge graph's was 890 MB and the episodic graph's 1.85 GB, and a load that decoded it as one string failed): each
 * store is opened in a child process on a snapshot of ~550 MB written in its own form, and must read every item.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const CHILD = fileURLToPath(new URL('../helpers/long-graph-snapshot.ts', import.meta.url))
/** 8,600 items of 64,000 characters: 550 MB of payload, past the 536,870,888 characters of V8's longest string. */
const ITEMS = 8_600
const TEXT_LENGTH = 64_000
const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

async function openInChild(kind: 'knowledge-graph' | 'episodic-graph'): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(tmpdir(), `recall-long-${kind}-`))
  dirs.push(dir)
  const { stdout } = await promisify(execFile)(process.execPath,
    ['--max-old-space-size=3072', '--import', 'tsx', CHILD, dir, kind, String(ITEMS), String(TEXT_LENGTH)],
    { maxBuffer: 1 << 20, timeout: 240_000 })
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>
  await rm(dir, { recursive: true, force: true })
  return result
}

const picked = [0, ITEMS / 2, ITEMS - 1].map((i) => ({ i, start: `${i}:abcdefghijklmn`.slice(0, 12) }))

describe('an embedded graph whose snapshot is longer than the longest string opens', () => {
  it('the knowledge graph reads every entity and relation', async () => {
    const read = await openInChild('knowledge-graph')
    expect(read.payloadBytes).toBeGreaterThan(read.maxString as number)
    expect(read.count).toEqual({ entities: ITEMS, relations: ITEMS })
    expect(read.first).toBe('实体0')
    expect(read.picked).toEqual(picked.map(({ i, start }) => ({ id: `r${i}`, ends: `e${i}>e${(i + 1) % ITEMS}`, length: TEXT_LENGTH, start })))
  }, 300_000)

  it('the episodic graph reads every Episode', async () => {
    const read = await openInChild('episodic-graph')
    expect(read.payloadBytes).toBeGreaterThan(read.maxString as number)
    expect(read.counts).toMatchObject({ Episode: ITEMS, Entity: 1 })
    expect(read.picked).toEqual(picked.map(({ i, start }) => ({ id: `ep${i}`, name: `第${i}集`, length: TEXT_LENGTH, start })))
  }, 300_000)
})
