/**
 * The Episodes applier: `POST /ingest/episodes`, `DELETE /episodes/{id}` written to the namespace's episodic graph and
 * its vector collections under the `episodes:` lock the write path hands it.
 */
import type { Change } from '../changes.js'
import { deleteEpisodes } from './writers/episode-deletes.js'
import type { EpisodicIngestResult } from '../episodes/results.js'
import { ingestEpisodes } from './writers/episodes-ingest.js'
import type { EpisodicIngestPorts } from './writers/episode-graphs.js'
import type { Exclusive } from '../write-lock.js'

type EpisodesChange = Extract<Change, { kind: 'episodes' }>

export async function applyEpisodes(ports: EpisodicIngestPorts, namespace: string, change: EpisodesChange, options: { collectionPrefix: string; exclusive: Exclusive }): Promise<EpisodicIngestResult | { deleted: string[] }> {
  const episodeOptions = { ...options, namespace }
  if (change.op === 'upsert') return ingestEpisodes(ports, change.body, episodeOptions)
  return { deleted: (await deleteEpisodes(ports, change.ids, episodeOptions)).deleted }
}
