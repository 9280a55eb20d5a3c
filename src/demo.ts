import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readDocuments } from './ingest/files.js'
import { readFile } from 'node:fs/promises'
import { ingestEpisodes } from './ingest/episodes.js'
import { ingestGraph, readGraphFile } from './ingest/graph.js'
import type { Services } from './services.js'

/** Where the demo world is: the nearest `demo/` above this module (src/ under tsx, dist/src/ or another build folder). */
export function demoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, 'demo', 'documents'))) return `${join(dir, 'demo')}/`
    const parent = dirname(dir)
    if (parent === dir) return fileURLToPath(new URL('../demo/', import.meta.url))
    dir = parent
  }
}

/** Loads each part of the demo world into its store when that store is empty; stores that hold anything are left alone. */
export async function loadDemoIfEmpty(services: Services, log: (msg: string) => void): Promise<void> {
  const dir = demoDir()
  if (existsSync(`${dir}graph.json`) && (await services.graph.count()).entities === 0) {
    const result = await ingestGraph(services.graph, await readGraphFile(`${dir}graph.json`))
    log(`demo knowledge graph loaded: ${result.entities} entities, ${result.relations} relations`)
  }
  const stored = await services.episodes.countByType()
  if (existsSync(`${dir}episodes.json`) && !stored.Episode) {
    const body = JSON.parse(await readFile(`${dir}episodes.json`, 'utf8')) as unknown
    const result = await ingestEpisodes({ graph: services.episodes, vectors: services.vectors, embedder: services.embedder }, body, {
      collectionPrefix: services.config.collectionPrefix
    })
    services.episodicChanges.count += 1
    log(`demo episodic memory loaded: ${result.episodes} episodes, ${result.facets} facets, ${result.points} points`)
  }
  if (services.documents.documentCount === 0 && existsSync(`${dir}documents`)) {
    const docs = await readDocuments([`${dir}documents`])
    log(`loading the demo corpus: ${docs.length} documents`)
    const summary = await services.documents.ingest(docs)
    log(`demo corpus loaded: ${summary.documents} documents, ${summary.chunks} chunks in ${Math.round(summary.took_ms)} ms`)
  }
}
