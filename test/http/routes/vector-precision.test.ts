import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

// The demo world's documents and its 62 judged questions: a service on int8 vectors (the default) answers them as one
// on float32.
const DEMO = join(import.meta.dirname, '../../../demo/documents')
const QUESTIONS = join(import.meta.dirname, '../../../bench/judged/demo-corpus.jsonl')
const VOLATILE = new Set(['generation', 'took_ms', 'cached'])

async function demoDocuments(): Promise<{ id: string; source: string; text: string }[]> {
  const out: { id: string; source: string; text: string }[] = []
  for (const entry of await readdir(DEMO, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.md')) continue
    const path = join(entry.parentPath, entry.name)
    const source = relative(DEMO, path)
    out.push({ id: source.replace(/\.md$/, '').replace(/[/]/g, '-'), source, text: await readFile(path, 'utf8') })
  }
  return out
}

/** Every hybrid answer's body, without the fields that differ between any two runs. */
async function answers(t: TestApp, questions: readonly string[]): Promise<unknown[]> {
  const out: unknown[] = []
  for (const query of questions) {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query, top_k: 10 } })
    expect(r.statusCode, r.body).toBe(200)
    out.push(JSON.parse(r.body, (key, value: unknown) => (VOLATILE.has(key) ? undefined : value)))
  }
  return out
}

/** The int8 pools' float rows files this process holds open under `dir` (unlinked, so only /proc/self/fd names them). */
async function floatRowFiles(dir: string): Promise<string[]> {
  const links = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))
  return links.filter((link) => link.startsWith(dir) && link.includes('.float-rows-'))
}

const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describe('VECTOR_PRECISION in the service: int8 by default, float32 selectable', () => {
  let documents: { id: string; source: string; text: string }[]
  let questions: string[]
  beforeAll(async () => {
    documents = await demoDocuments()
    questions = (await readFile(QUESTIONS, 'utf8')).trim().split('\n').map((line) => (JSON.parse(line) as { query: string }).query)
  })

  it('answers the demo questions in hybrid mode as float32 does, body for body, and each folder opens under the other precision', async () => {
    const ingest = async (t: TestApp) => {
      const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents } })
      expect(r.statusCode, r.body).toBe(200)
    }
    const floatDir = await mkdtemp(join(tmpdir(), 'recall-float32-'))
    const int8Dir = await mkdtemp(join(tmpdir(), 'recall-int8-'))
    dirs.push(floatDir, int8Dir)

    const float32 = await buildTestApp({ DATA_DIR: floatDir, VECTOR_PRECISION: 'float32' })
    await ingest(float32)
    const expected = await answers(float32, questions)
    expect(await floatRowFiles(floatDir)).toEqual([])
    await float32.close()
    expect(documents.length).toBeGreaterThan(30)
    expect(expected.every((body) => (body as { recall_bundle: unknown[] }).recall_bundle.length > 0)).toBe(true)

    // no setting: int8, whose pools keep their float rows in files (closed with the service)
    const int8 = await buildTestApp({ DATA_DIR: int8Dir })
    await ingest(int8)
    expect(await answers(int8, questions)).toEqual(expected)
    expect((await floatRowFiles(join(int8Dir, 'vectors'))).length).toBeGreaterThan(0)
    await int8.close()
    expect(await floatRowFiles(int8Dir)).toEqual([])

    const restarted = await buildTestApp({ DATA_DIR: int8Dir, VECTOR_PRECISION: 'int8' })
    expect(await answers(restarted, questions)).toEqual(expected)
    expect((await floatRowFiles(join(int8Dir, 'vectors'))).length).toBeGreaterThan(0)
    await restarted.close()

    // the folder int8 wrote, opened on float32; the folder float32 wrote, opened on the default
    const int8AsFloat = await buildTestApp({ DATA_DIR: int8Dir, VECTOR_PRECISION: 'float32' })
    expect(await answers(int8AsFloat, questions)).toEqual(expected)
    expect(await floatRowFiles(int8Dir)).toEqual([])
    await int8AsFloat.close()
    const floatAsDefault = await buildTestApp({ DATA_DIR: floatDir })
    expect(await answers(floatAsDefault, questions)).toEqual(expected)
    expect((await floatRowFiles(join(floatDir, 'vectors'))).length).toBeGreaterThan(0)
    await floatAsDefault.close()
  }, 900_000)
})
