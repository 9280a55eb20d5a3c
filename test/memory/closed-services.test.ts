import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import type { Embedder } from '../../src/providers/embedder/port.js'

// Services closed in a process that goes on (the CLI, tests, a bench that restarts on the same DATA_DIR) must be
// collectable with all they held. prom-client's GC-duration collector observes GC for the rest of the process and
// holds the registry, whose gauges read the stores: a closed instance's stores were kept (495 MiB at 20k chunks in
// bench/memory.ts, where it read as heap "built at start-up"). The emptied registry itself stays, held by that collector.
setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const embedder: Embedder = {
  model: 'test-model', dimensions: 8,
  embedQueries: async (texts) => texts.map(() => new Float32Array(8).fill(0.5)),
  embedPassages: async (texts) => texts.map((t) => Float32Array.from({ length: 8 }, (_, i) => (t.charCodeAt(i % t.length) % 7) + 1)),
  health: async () => ({ backend: 'embedder:test', ok: true, latency_ms: 0 }),
  close: async () => {}
}

/** Opens services on a new folder, writes a document, closes them; answers weak references to what they held. */
async function openWriteClose(): Promise<Array<WeakRef<object>>> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-closed-services-'))
  dirs.push(dir)
  const config = loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', EMBEDDING_SESSIONS: '0' })
  const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
  await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: [{ id: 'a', text: '# 标题\n\n夜间告警由二线值班处理。' }] })
  const held = [services, services.graph, services.vectors, services.documents, services.lexical].map((o) => new WeakRef(o as object))
  await services.close()
  return held
}

describe('closed services', () => {
  it('keep nothing alive once closed: the services, the stores and the catalog are collected', async () => {
    const held = await openWriteClose()
    // a WeakRef keeps its target until the job that made or read it ends: each collection runs in a later turn than
    // the last read; background work the write left (derivation, merges) may hold them a little longer
    for (let i = 0; i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      collect()
      if (held.every((r) => r.deref() === undefined)) break
    }
    expect(held.map((r) => r.deref() === undefined)).toEqual([true, true, true, true, true])
  })
})
