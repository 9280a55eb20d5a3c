import type { LegReport } from '../src/kernel/leg-report.js'

/**
 * One item of the recall bundle (docs/api.md, "The response"). `Name` is the mode's name: an adapter knows only its own,
 * and the union of every mode's name is the registry's (`Mode` in src/modes.ts, derived from its definitions).
 */
export interface RecallItem<M extends object = Record<string, unknown>, Name extends string = string> {
  id: string
  text: string
  /** Higher is more relevant, in every mode. */
  score: number
  source: string
  mode: Name
  /** The mode's explanation, typed by the mode's metadata schema (adapters/<mode>/spec.ts). */
  metadata: M
}

/** How far the items can be trusted as evidence; `none` means they should not be. */
export type MatchStrength = 'strong' | 'medium' | 'weak' | 'none'

/** The first items share one score exactly: their order says nothing about relevance. */
export interface TopTie {
  /** Every returned item tied with the first, in the returned order. */
  ids: string[]
  /** The mode's native figure they share (episodic: the bundle cost). */
  value: number
  /** What ordered them instead. */
  ordered_by: 'id'
}

export interface AdapterResult<M extends object = Record<string, unknown>, Name extends string = string> {
  items: RecallItem<M, Name>[]
  legs: LegReport[]
  /** Defined per mode from what the mode knows; the README documents each rule. */
  match_strength?: MatchStrength
  /** Set when the first two items tie (episodic); the README documents it. */
  tie?: TopTie
  /**
   * Set when the answer read beyond the mode's own index (graphrag's passage fallback reads the documents' lexical
   * index): a write of another kind may change it, so the service does not cache it.
   */
  uncacheable?: true
  /** hybrid with `include_images`: the pictures nearest the question, best first, apart from `items`. */
  image_items?: ImageItem[]
}

/** A picture of a document answered beside the recall bundle (`image_items`). */
export interface ImageItem {
  /** `<doc id>#img-<hash>`: `GET /images/{id}` serves its bytes. */
  id: string
  /** Cosine similarity of the question to the picture's text, in [-1, 1]; higher is closer. */
  score: number
  document: string
  page?: number
  /** Its caption, else its alt text, else empty. */
  caption: string
  /** The text embedded for it: caption, alt text, headings, OCR text, the sentences around it. */
  text: string
  /** Where its bytes are served: `/images/{id}?namespace=…`. */
  url: string
}

/** What the service read for a request before its mode runs. */
/**
 * What graphrag and episodic read of a namespace (its setting, docs/derivation.md, "What each mode reads"): what was
 * imported, what was derived from its documents, or both. Absent: the derived part only where nothing was imported.
 */
export type StructuresRead = 'imported' | 'derived' | 'both'

export interface RetrieveContext {
  /** The namespace's setting of what graphrag and episodic read (the service reads it before the mode runs). */
  structures?: StructuresRead
  /**
   * The version of the mode's indexes in the request's namespace, read before the mode runs (the shared catalog
   * caught up to it): a backend that checks such a version uses it rather than reading it again.
   */
  indexVersion?: string
}

/** What every mode adapter exposes; `R` is the mode's validated request, `Name` its name. */
export interface ModeAdapter<R extends { query: string; top_k: number }, M extends object = Record<string, unknown>, Name extends string = string> {
  readonly mode: Name
  /** `signal` aborts every backend call still running (a caller that went away, a request deadline). */
  retrieve(request: R, signal?: AbortSignal, context?: RetrieveContext): Promise<AdapterResult<M, Name>>
}
