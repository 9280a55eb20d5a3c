/**
 * The registry of retrieval modes: one line per mode definition (adapters/<mode>/index.ts). Everything the
 * service does per mode (request and response schemas, option checks, start-up gating, cache versions,
 * legs in metrics, compare's evidence) reads these definitions; adding a mode is one folder and one line here.
 */
import type { ModeDefinition, ModeDeployment, ModeIndex } from '../adapters/definition.js'
import { episodicMode } from '../adapters/episodic/index.js'
import { graphragMode } from '../adapters/graphrag/index.js'
import { hybridMode, type HybridPorts } from '../adapters/hybrid/index.js'
import type { LegSpec } from '../adapters/leg-runner.js'
import type { ReachGraph } from '../adapters/graph-reach.js'
import type { ServiceAnalyzer } from './kernel/analyzers.js'
import type { Embedder } from './providers/embedder/port.js'
import type { EpisodicGraphStore } from './providers/episodic-graph/port.js'
import type { IndexKind } from './providers/generations/port.js'
import type { KnowledgeGraphStore } from './providers/knowledge-graph/port.js'
import type { VectorStore } from './providers/vector-store/port.js'

export const MODE_DEFINITIONS = [hybridMode, graphragMode, episodicMode] as const

export type Mode = (typeof MODE_DEFINITIONS)[number]['name']
export const MODE_NAMES = MODE_DEFINITIONS.map((d) => d.name) as unknown as readonly [Mode, ...Mode[]]

type Definition = (typeof MODE_DEFINITIONS)[number]

/** Every mode's adapter, by name: each definition's name mapped to what its `create` returns. */
export type ModeTable = { [D in Definition as D['name']]: ReturnType<D['create']> }

const BY_NAME = new Map<string, ModeDefinition>(MODE_DEFINITIONS.map((d) => [d.name, d as unknown as ModeDefinition]))

/** The definition of a mode (the name is validated by the request schema before this is asked). */
export function modeDefinition(mode: string): ModeDefinition {
  const definition = BY_NAME.get(mode)
  if (!definition) throw new Error(`unknown mode ${JSON.stringify(mode)}`)
  return definition
}

const INDEX_KINDS: Record<ModeIndex, IndexKind> = { documents: 'hybrid', 'knowledge-graph': 'graphrag', episodes: 'episodic' }

/** The index a mode reads (its definition's `index`), as the generations name it: it keys the mode's read state and cached answers. */
export function indexKindOf(mode: string): IndexKind {
  return INDEX_KINDS[modeDefinition(mode).index]
}

/** The deployment every mode is created for: the backends' names and the configured read timeouts. */
export function modeDeployment(
  config: {
    timeouts: ModeDeployment['timeouts']; collectionPrefix: string
    graphrag?: { partialNames: boolean; evidenceFallback?: boolean; entityVectors?: boolean; meaningFloor?: number }
    lexical?: { analyzer: ServiceAnalyzer }
  },
  names: { embedder: string; vectors: string; lexical: string; graph: string; episodes: string }
): ModeDeployment {
  return {
    backends: { embedder: names.embedder, vectors: names.vectors, lexical: names.lexical, graph: names.graph, episodes: names.episodes },
    timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, lexical: config.timeouts.lexical, graph: config.timeouts.graph },
    collectionPrefix: config.collectionPrefix,
    ...(config.graphrag ? { graphragPartialNames: config.graphrag.partialNames } : {}),
    ...(config.graphrag?.evidenceFallback !== undefined ? { graphragEvidenceFallback: config.graphrag.evidenceFallback } : {}),
    ...(config.graphrag?.entityVectors && config.graphrag.meaningFloor !== undefined ? { graphragMeaningFloor: config.graphrag.meaningFloor } : {}),
    ...(config.lexical ? { lexicalAnalyzer: config.lexical.analyzer } : {})
  }
}

/**
 * The service's ports, by the slot names of LegSpec['backend'] (plus hybrid's corpus). A definition's `create`
 * takes the slots it reads; `createModes` compiles only while this holds every one of them.
 */
export interface ModePorts {
  vectors: VectorStore
  embedder: Embedder
  corpus: HybridPorts['corpus']
  graph: KnowledgeGraphStore
  episodes: EpisodicGraphStore
  /** The graph as hybrid's `graph` leg reads it: graphrag's reach (adapters/graph-reach.ts), given by `createModes`. */
  graphReach: ReachGraph
  /** The vector store's collection of the documents' pictures, for hybrid's `include_images`. */
  images?: HybridPorts['images']
}

/** Mode name -> adapter, created from each definition with the ports it reads. */
export function createModes(ports: Omit<ModePorts, 'graphReach'>, deployment: ModeDeployment): ModeTable {
  // hybrid's graph leg reads through graphrag's adapter (its name matcher, cached per graph version), looked up when called
  const graphReach: ReachGraph = (request, signal) => modes.graphrag.reach(request, signal)
  // Object.fromEntries cannot carry the mapped type; the entries come from the very definitions ModeTable maps over.
  const modes = Object.fromEntries(MODE_DEFINITIONS.map((d) => [d.name, d.create({ ...ports, graphReach }, deployment)])) as ModeTable
  return modes
}

/** The backend behind each leg of each mode, by leg name: a failed leg is counted against it, and a timeout names it. */
export function legBackendsOf(names: { embedder: string; vectors: string; lexical: string; graph: string; episodes: string }): Record<Mode, Record<string, string>> {
  const slot: Record<LegSpec['backend'], string> = { embedder: names.embedder, vectors: names.vectors, lexical: names.lexical, graph: names.graph, episodes: names.episodes }
  return Object.fromEntries(MODE_DEFINITIONS.map((d) => [d.name,
    Object.fromEntries(Object.entries(d.legs as Record<string, LegSpec>).map(([leg, spec]) => [leg, slot[spec.backend]]))])) as Record<Mode, Record<string, string>>
}
