/**
 * A retrieval mode, declared once. The registry (src/modes.ts) lists one definition per mode; the request
 * and response schemas, the OpenAPI document, start-up gating, the response cache, metrics and compare all
 * read it, so adding a mode costs one folder under adapters/ and one registry line.
 */
import type { ServiceAnalyzer } from '../src/kernel/analyzers.js'
import type { StartupStep } from '../src/kernel/startup-steps.js'
import type { TObject, TProperties } from 'typebox'
import type { LegSpec } from './leg-runner.js'
import type { ModeAdapter, RecallItem, StructuresRead } from './types.js'

/** The part of a validated retrieve request every mode shares. */
interface CommonRequest {
  query: string
  top_k: number
  namespace: string
  /** The namespace's setting of what graphrag and episodic read (filled in by the service, not a body field). */
  structures?: StructuresRead
}

/** Which of the service's index versions keys a mode's cached answers. */
export type ModeIndex = 'documents' | 'knowledge-graph' | 'episodes'

/** The deployment a mode is created for: the backend behind each slot, and the read timeouts. */
export interface ModeDeployment {
  backends: Readonly<Record<LegSpec['backend'], string>>
  timeouts: Readonly<Record<LegSpec['timeout'], number>>
  /** `COLLECTION_PREFIX`. */
  collectionPrefix: string
  /** `GRAPHRAG_PARTIAL_NAMES`; absent: `true`. */
  graphragPartialNames?: boolean
  /** `GRAPHRAG_EVIDENCE_FALLBACK`; absent: `true`. */
  graphragEvidenceFallback?: boolean
  /** The lexical index's analyzer (`LEXICAL_STEMMING`); absent: `cjk-bigram`. */
  lexicalAnalyzer?: ServiceAnalyzer
  /** `GRAPHRAG_MEANING_FLOOR` when `ENTITY_VECTORS` is on; absent: no entity found by meaning. */
  graphragMeaningFloor?: number
}

export interface ModeDefinition<
  Name extends string = string,
  Ports = unknown,
  Request extends { query: string; top_k: number } = { query: string; top_k: number },
  Metadata extends object = Record<string, unknown>,
  Adapter extends ModeAdapter<Request, Metadata, Name> = ModeAdapter<Request, Metadata, Name>
> {
  readonly name: Name
  /** The mode's options at the top level of a `POST /retrieve` body or a compare arm (TypeBox properties). */
  readonly options: TProperties
  /** The options `GET /retrieve` takes as query parameters (a subset, in string-friendly forms). */
  readonly queryOptions: TProperties
  /** The mode's keys of the request `filter`. */
  readonly filter: TProperties
  /** The schema of each item's `metadata` (what `Metadata` is the static type of). */
  readonly metadata: TObject
  /** The service's start-up steps the mode waits for before it answers. */
  readonly startup: readonly StartupStep[]
  /** Each backend step: the backend slot it calls, its timeout, and whether its failure degrades or fails the request. */
  readonly legs: Readonly<Record<string, LegSpec>>
  /** The index version that keys its cached answers. */
  readonly index: ModeIndex
  /** The mode's options from `GET /retrieve` query parameters. */
  fromQuery(query: Readonly<Record<string, unknown>>): Record<string, unknown>
  /** Whether answering embeds the query (and so waits in the model's queue; the overload guard counts it). */
  embedsQuery(options: Readonly<Record<string, unknown>>): boolean
  /** The adapter's request: the common fields, the mode's options, and its part of the normalised filter. */
  adapterRequest(common: CommonRequest, options: Readonly<Record<string, unknown>>, filter: Readonly<Record<string, unknown>> | undefined): Request
  /** What is wrong with a combination of the mode's options the schema cannot refuse (named under `at`), else undefined. */
  checkOptions?(options: Readonly<Record<string, unknown>>, at: string): string | undefined
  /** The ids of what an item stands on (hybrid chunks; for compare's overlap figures). */
  evidence(item: Pick<RecallItem, 'id' | 'source' | 'metadata'>): string[]
  /** The adapter, given the service's ports by slot name (the registry's `ModePorts`: it must hold every port a mode names). */
  create(ports: Ports, deployment: ModeDeployment): Adapter
}

/** Checks a definition against the interface while keeping its literal types (name, legs). */
export function defineMode<
  Name extends string, Ports, Request extends { query: string; top_k: number }, Metadata extends object,
  Adapter extends ModeAdapter<Request, Metadata, Name> = ModeAdapter<Request, Metadata, Name>
>(
  definition: ModeDefinition<Name, Ports, Request, Metadata, Adapter>
): ModeDefinition<Name, Ports, Request, Metadata, Adapter> {
  return definition
}
