import type { LegReport, Mode } from '../src/schemas/recall-bundle.js'

/** One item of the recall bundle (DESIGN section 3). */
export interface RecallItem {
  id: string
  text: string
  /** Higher is more relevant, in every mode. */
  score: number
  source: string
  mode: Mode
  metadata: Record<string, unknown>
}

/** How far the items can be trusted as evidence; `none` means they should not be. */
export type MatchStrength = 'strong' | 'medium' | 'weak' | 'none'

export interface AdapterResult {
  items: RecallItem[]
  legs: LegReport[]
  /** Defined per mode from what the mode knows; the README documents each rule. */
  match_strength?: MatchStrength
}

/** What every mode adapter exposes; `R` is the mode's validated request. */
export interface ModeAdapter<R extends { query: string; top_k: number }> {
  readonly mode: Mode
  retrieve(request: R, signal?: AbortSignal): Promise<AdapterResult>
}
