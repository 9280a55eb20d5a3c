/**
 * The registry of retrieval modes: one line per mode definition (adapters/<mode>/index.ts). Everything the
 * service does per mode (request and response schemas, option checks, start-up gating, cache versions,
 * legs in metrics, compare's evidence) reads these definitions; adding a mode is one folder and one line here.
 */
import type { ModeDefinition, ModeDeployment } from '../adapters/definition.js'
import { episodicMode } from '../adapters/episodic/index.js'
import { graphragMode, type GraphragAdapter } from '../adapters/graphrag/index.js'
import { hybridMode, type HybridAdapter } from '../adapters/hybrid/index.js'
import type { EpisodicAdapter, EpisodicPorts } from '../adapters/episodic/index.js'
import type { HybridPorts } from '../adapters/hybrid/index.js'
import type { LegSpec } from '../adapters/leg-runner.js'
import type { KnowledgeGraphStore } from './providers/knowledge-graph/port.js'
import type { EpisodicGraphStore } from './providers/episodic-graph/port.js'

export const MODE_DEFINITIONS = [hybridMode, graphragMode, episodicMode] as const

export type Mode = (typeof MODE_DEFINITIONS)[number]['name']
export const MODE_NAMES = MODE_DEFINITIONS.map((d) => d.name) as unknown as readonly [Mode, ...Mode[]]

/** Every mode's adapter, by name. */
export type ModeTable = { hybrid: HybridAdapter; graphrag: GraphragAdapter; episodic: EpisodicAdapter }

const BY_NAME = new Map<string, ModeDefinition>(MODE_DEFINITIONS.map((d) => [d.name, d as unknown as ModeDefinition]))

/** The definition of a mode (the name is validated by the request schema before this is asked). */
export function modeDefinition(mode: string): ModeDefinition {
  const definition = BY_NAME.get(mode)
  if (!definition) throw new Error(`unknown mode ${JSON.stringify(mode)}`)
  return definition
}

/** The deployment every mode is created for: the backends' names and the configured read timeouts. */
export function modeDeployment(
  config: { timeouts: ModeDeployment['timeouts']; collectionPrefix: string },
  names: { embedder: string; vectors: string; lexical: string; graph: string; episodes: string }
): ModeDeployment {
  return {
    backends: { embedder: names.embedder, vectors: names.vectors, lexical: names.lexical, graph: names.graph, episodes: names.episodes },
    timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, lexical: config.timeouts.lexical, graph: config.timeouts.graph },
    collectionPrefix: config.collectionPrefix
  }
}

/** Every port some mode reads. */
export type ModePorts = Pick<HybridPorts, 'vectors' | 'embedder' | 'corpus'> & Pick<EpisodicPorts, 'vectors' | 'embedder'> & {
  graph: KnowledgeGraphStore
  episodes: EpisodicGraphStore
}

/** Mode name -> adapter, created from each definition with the ports it reads. */
export function createModes(ports: ModePorts, deployment: ModeDeployment): ModeTable {
  return {
    hybrid: hybridMode.create(ports, deployment),
    graphrag: graphragMode.create(ports, deployment) as GraphragAdapter,
    episodic: episodicMode.create({ ...ports, graph: ports.episodes }, deployment)
  }
}

/** The backend behind each leg of each mode, by leg name: a failed leg is counted against it, and a timeout names it. */
export function legBackendsOf(names: { embedder: string; vectors: string; lexical: string; graph: string; episodes: string }): Record<Mode, Record<string, string>> {
  const slot: Record<LegSpec['backend'], string> = { embedder: names.embedder, vectors: names.vectors, lexical: names.lexical, graph: names.graph, episodes: names.episodes }
  return Object.fromEntries(MODE_DEFINITIONS.map((d) => [d.name,
    Object.fromEntries(Object.entries(d.legs as Record<string, LegSpec>).map(([leg, spec]) => [leg, slot[spec.backend]]))])) as Record<Mode, Record<string, string>>
}
