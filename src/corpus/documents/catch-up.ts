/** What a catch-up of some documents (src/corpus/appliers/writers/document-catch-up.ts) reports. */

/**
 * Where a re-read of some documents spent its time, in ms: `queued` behind this library's own writes, `store`
 * reading the vector store, `lexical` bringing the lexical index up to it (its copy's change applied).
 */
export type RefreshPhases = { queued?: number; store?: number; lexical?: number }

/** How many documents a catch-up applied from the write window, and how many it read back from the vector store. */
export type RefreshSources = { window: number; store: number }
