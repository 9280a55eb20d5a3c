/**
 * Derived Episodes linked to the derived entities (`DERIVED_EPISODE_ENTITY_LINKS`), on the embedded stores, on Neo4j and
 * on Qdrant + Neo4j: a link's edge label is the entity's name, so it takes the name's vector (stored, or embedded once in
 * the same write) instead of another model run (docs/derivation.md, "Vectors from the chunks"). The embedder is the real
 * local model, wrapped to record the texts it is given; the expected vectors are fresh embeddings of the names.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import type { EpisodicEdge } from '../../src/providers/episodic-graph/port.js'
import { openServices, type Services } from '../../src/services.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const GUIDE = {
  id: 'guide',
  text: '# 网关手册\n\n网关由平台组负责维护。\n\n## 限流\n\n网关对每个租户限流，每秒最多 100 次请求。\n\n## 回滚\n\n回滚时关闭 gateway.streaming.enabled 开关。'
}
// The same text under another id: every entity its Episode links, and every edge label, is already stored.
const COPY = { ...GUIDE, id: 'guide-copy' }

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`derived-episode-links (qdrant+neo4j): ${QDRANT_SKIP_LINE}`)

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) },
  {
    name: 'qdrant+neo4j', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `del_${randomBytes(3).toString('hex')}_`,
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000'
    })
  }
]

/** The real embedder, recording every passage it embeds. */
function counting(base: Embedder, seen: string[]): Embedder {
  return {
    model: base.model,
    dimensions: base.dimensions,
    embedQueries: (texts, signal) => base.embedQueries(texts, signal),
    embedPassages: (texts) => {
      seen.push(...texts)
      return base.embedPassages(texts)
    },
    backlog: () => base.backlog?.(),
    health: () => base.health(),
    close: () => base.close()
  }
}

const label = (e: EpisodicEdge) => e.edge_text || e.relationship_name

for (const backend of backends) {
  describe.skipIf(backend.skip === true)(`derived Episode links cost no model run of their own (${backend.name})`, () => {
    let services: Services
    let dir: string
    const seen: string[] = []
    const ns = `del-${randomBytes(4).toString('hex')}`
    const reversed = `${ns}-rev`

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'recall-derived-links-'))
      const config = loadConfig({
        DATA_DIR: dir, DEMO_DATA: 'false', DERIVED_EPISODES: 'true', DERIVED_EPISODE_ENTITY_LINKS: '4,8', DERIVED_EPISODE_ENTITY_MIN_MENTIONS: '1', EMBEDDING_SESSIONS: '0',
        // the entity-name vectors (issue 41) embed the graph's names after the write, into their own collection: this
        // file counts what the write itself embeds
        ENTITY_VECTORS: 'false',
        MODEL_DIR: process.env.MODEL_DIR ?? './models', ...backend.env()
      })
      services = await openServices(config, { providers: (p) => ({ ...p, embedder: counting(p.embedder, seen) }) })
    })
    afterAll(async () => {
      for (const namespace of [ns, reversed]) await services.writePath.write(namespace, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await services.close()
      await rm(dir, { recursive: true, force: true })
    })

    const derivedCollection = (name: string) => `${services.config.collectionPrefix}derived_${name}`
    /** The involves_entity edges of a document's Episode and its Facets, with the linked entities' names. */
    const linksOf = async (namespace: string, doc: string) => {
      const episode = await services.episodes.describe(namespace, [`d:ep:${doc}`])
      const facets = episode.edges.filter((e) => e.relationship_name === 'has_facet').map((e) => e.to)
      const below = await services.episodes.describe(namespace, facets)
      const edges = [...episode.edges, ...below.edges]
      const links = edges.filter((e) => e.relationship_name === 'involves_entity')
      const entities = await services.episodes.describe(namespace, [...new Set(links.map((e) => e.to))])
      return { edges, links, names: new Map(links.map((e) => [e.to, entities.nodes.get(e.to)?.name ?? ''] as const)) }
    }

    it('a write embeds each distinct entity name and edge label once, a label that is a name with the name', async () => {
      seen.length = 0
      const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [GUIDE] })
      const { edges, links, names } = await linksOf(ns, 'guide')
      expect(links.length).toBeGreaterThan(0)
      // the Facet links carry the entity's name (docs/derivation.md): the same text, so one model run for both
      for (const e of links.filter((l) => l.from.includes('/f'))) expect(label(e)).toBe(names.get(e.to))
      const texts = new Set([...names.values(), ...edges.map(label)])
      expect(written.derived!.episode_texts_embedded).toBe(texts.size)
      for (const text of texts) expect(seen.filter((s) => s === text), text).toHaveLength(1)
    })

    it('a write whose entities and labels are stored embeds none of them', async () => {
      seen.length = 0
      const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [COPY] })
      expect(written.derived).toMatchObject({ episodes: 1, episode_texts_embedded: 0 })
      const { edges, names } = await linksOf(ns, 'guide-copy')
      expect(names.size).toBeGreaterThan(0)
      for (const text of new Set([...names.values(), ...edges.map(label)])) expect(seen, text).not.toContain(text)
    })

    it('a stored edge label\'s vector is its entity\'s name vector, a fresh embedding of the name, whatever the write order', async () => {
      await services.writePath.write(reversed, { kind: 'documents', op: 'upsert', documents: [COPY] })
      await services.writePath.write(reversed, { kind: 'documents', op: 'upsert', documents: [GUIDE] })
      const { names } = await linksOf(ns, 'guide')
      const ids = [...names.keys()].sort()
      const texts = ids.map((id) => names.get(id)!)
      const fresh = await services.embedder.embedPassages(texts)
      for (const namespace of [ns, reversed]) {
        const nameVectors = await services.vectors.vectorsOf(derivedCollection('Entity_name'), namespace, ids)
        const labelVectors = await services.vectors.vectorsOf(derivedCollection('RelationType_relationship_name'), namespace, texts)
        ids.forEach((id, i) => {
          for (const stored of [nameVectors.get(id), labelVectors.get(texts[i]!)]) {
            expect(stored, `${namespace} ${texts[i]}`).toBeDefined()
            expect(stored!.length).toBe(fresh[i]!.length)
            stored!.forEach((x, k) => expect(Math.abs(x - fresh[i]![k]!), `${namespace} ${texts[i]}[${k}]`).toBeLessThan(1e-6))
          }
        })
      }
    })
  })
}
