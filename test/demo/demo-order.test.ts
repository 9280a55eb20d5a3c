import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { loadDemoGraph } from '../../src/corpus/demo.js'
import { openServices } from '../../src/services.js'

describe('the demo graph at start-up', () => {
  it('is loaded when the namespace holds only what documents derived, and left alone once imported', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-demo-order-'))
    const services = await openServices(loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models' }))
    try {
      // the documents step ran first: the graph holds derived entities only
      await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: [{ id: 'n', text: '左氧氟沙星禁用于18岁以下儿童。' }] })
      expect((await services.graph.count('default')).entities).toBeGreaterThan(0)
      // demo/graph.json holds 220 entities
      expect(await loadDemoGraph(services)).toMatch(/^220 entities, \d+ relations$/)
      expect(await loadDemoGraph(services)).toBe('the knowledge graph holds imported entities; left alone')
    } finally {
      await services.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
