/** What an Episode write answers: the types the change union and its callers read, apart from the writers (src/corpus/appliers/writers/). */
import type { IngestWarning } from './warnings.js'

/** What an Episode write wrote: nodes by kind, edges and vectors. */
export interface EpisodeCounts {
  episodes: number
  facets: number
  points: number
  entities: number
  edges: number
  vectors: number
}

export interface EpisodicIngestResult extends EpisodeCounts {
  /** The first `MAX_LISTED_WARNINGS` warnings of `episodeWarnings` (./warnings.ts). */
  warnings: IngestWarning[]
  warnings_total: number
}

