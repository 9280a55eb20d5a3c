/**
 * Packing a recall bundle into a context for generation, within a token budget (pure: no I/O). Items are
 * taken best first; a graphrag item may bring its evidence chunks right after it, those of higher weight first
 * (`metadata.evidence`: the lineage weights of docs/derivation.md, "Grounded answers"). Each passage is packed
 * once: an item or chunk already packed, or a text another packed passage contains, is a duplicate, and a
 * window overlapping a packed one keeps only what is new. The first passage that does not fit whole is cut
 * to fit; later ones that do not fit are dropped. The manifest accounts for every item of the bundle.
 */
import { frame, renderBlock, renderParts, splitsCleanly, type ContextFormat, type Passage } from './formats.js'
import type { TokenCounter } from './tokenizers.js'

/** The fields of a recall item packing reads. */
export interface PackItem {
  id: string
  text: string
  score: number
  source: string
  mode: string
  metadata: {
    rank?: number; title?: string; entity_name?: string; episode_name?: string; name?: string | null; source_chunk_ids?: string[]
    /** graphrag: the item's evidence chunks with their lineage weights; without it, `source_chunk_ids` in order. */
    evidence?: Array<{ chunk_id: string; weight: number }>
    /** episodic, a conversation session's item: the turns it rests on, best first (docs/conversations.md). */
    turns?: Array<{ id: string; speaker: string; time: string; text: string }>
  }
}

/**
 * A conversation session's item is packed as its turns, best first, one a line with its time and speaker (so that a
 * cut keeps the best turns); any other item as its text.
 */
function packedText(item: PackItem): string {
  const turns = item.metadata.turns
  if (!turns || turns.length === 0) return item.text.trim()
  return turns.map((t) => `[${t.time}] ${t.speaker}: ${t.text.trim()}`).join('\n')
}

/** A stored chunk, for a graphrag item's evidence. */
export interface EvidenceChunk {
  text: string
  source: string
  title?: string
}

type EvidencePolicy = 'none' | 'include' | 'require'

export interface PackOptions {
  maxTokens: number
  counter: TokenCounter
  format: ContextFormat
  /** Items scoring below it are dropped (`below_threshold`). */
  minScore?: number
  /** Whether graphrag items bring their evidence chunks (`include`), must have one (`require`), or bring none. */
  evidence: EvidencePolicy
  /** Evidence chunks packed per item at most. */
  maxEvidencePerItem: number
  /** A chunk by id, or undefined when the namespace does not hold it. */
  chunk(id: string): EvidenceChunk | undefined
}

type DropReason = 'budget' | 'duplicate' | 'below_threshold' | 'no_evidence'

interface Truncation {
  /** Which end of the text was cut. */
  at: 'start' | 'end'
  /** `budget`: the rest did not fit; `overlap`: that part is already in the context (an overlapping window). */
  reason: 'budget' | 'overlap'
  kept_chars: number
  original_chars: number
}

interface EvidenceEntry {
  chunk_id: string
  /** Its lineage weight, when the item gave one. */
  weight?: number
  status: 'included' | 'truncated' | 'duplicate' | 'missing' | 'dropped'
  reason?: DropReason
  /** Where the chunk is in the context (its own marker, or the earlier one it duplicates). */
  marker?: number
  truncated?: Truncation
  tokens: number
}

interface ManifestEntry {
  id: string
  rank: number
  score: number
  status: 'included' | 'truncated' | 'dropped'
  reason?: DropReason
  marker?: number
  /** For a duplicate: the marker of the passage that already holds its text. */
  duplicate_of?: number
  truncated?: Truncation
  /** Tokens its block took in the context (0 when dropped). */
  tokens: number
  evidence?: EvidenceEntry[]
}

interface Citation {
  marker: number
  /** `[n]`, as it appears in the context. */
  label: string
  kind: 'item' | 'evidence'
  id: string
  source: string
  /** The chunk ids behind it: a hybrid chunk's own id, a graphrag item's `source_chunk_ids`, an evidence chunk's id. */
  evidence_chunk_ids: string[]
  /** Markers in the context of those chunks (for a graphrag item, its evidence passages), or of the item an evidence chunk supports. */
  related_markers: number[]
}

export interface Packed {
  context: string
  tokens: number
  citations: Citation[]
  manifest: ManifestEntry[]
}

/** A passage is cut only when at least this many tokens are left for it; below, it is dropped. */
const MIN_TRUNCATED_TOKENS = 16
/** An overlap shorter than this many characters is left alone (a shared phrase, not a shared window). */
const MIN_OVERLAP_CHARS = 24

export class BudgetTooSmallError extends Error {
  constructor(readonly maxTokens: number, readonly needed: number, readonly itemId: string, readonly tokenizer: string) {
    super(`max_tokens ${maxTokens} is too small for even one item: the first item (${JSON.stringify(itemId)}) needs at least ` +
      `${needed} tokens in ${tokenizer} (its marker, source and the start of its text); ask for max_tokens >= ${needed}`)
    this.name = 'BudgetTooSmallError'
  }
}

const normalise = (s: string): string => s.replace(/\s+/g, ' ').trim()

/** The heading label of an item. */
function labelOf(item: PackItem): string | undefined {
  const m = item.metadata
  if (item.mode === 'hybrid') return m.title
  if (item.mode === 'graphrag') return m.entity_name
  return m.episode_name ?? m.name ?? undefined
}

/** How `text` overlaps an already packed text: the characters to cut from its start or end, if any. */
function overlapWith(packed: string, text: string): { at: 'start' | 'end'; chars: number } | undefined {
  // the end of `packed` is the start of `text`
  const probe = text.slice(0, MIN_OVERLAP_CHARS)
  for (let at = packed.indexOf(probe); at >= 0; at = packed.indexOf(probe, at + 1)) {
    const tail = packed.slice(at)
    if (tail.length < text.length && text.startsWith(tail)) return { at: 'start', chars: tail.length }
  }
  // the end of `text` is the start of `packed`
  const head = packed.slice(0, MIN_OVERLAP_CHARS)
  for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + 1)) {
    const tail = text.slice(at)
    if (tail.length < text.length && packed.startsWith(tail)) return { at: 'end', chars: tail.length }
  }
  return undefined
}

interface Candidate {
  kind: 'item' | 'evidence'
  id: string
  source: string
  mode: string
  label?: string
  text: string
  /** Set by `withoutOverlap`: the text with what a packed window already holds cut off. */
  overlap?: { text: string; truncated: Truncation }
}

/** Code points of `s` from the start, as a string. */
function prefixOf(chars: string[], n: number): string {
  return chars.slice(0, n).join('')
}

/** Packs `items` (best first) within `options.maxTokens` as counted by `options.counter`. */
export function pack(items: readonly PackItem[], options: PackOptions): Packed {
  const { head, tail } = frame(options.format)
  const frameTokens = options.counter.count(head) + options.counter.count(tail)
  const packer = new Packer(options, frameTokens)
  const manifest: ManifestEntry[] = []
  items.forEach((item, i) => manifest.push(packItem(packer, item, i, options)))
  return assemble(packer, items, manifest, options, { head, tail, frameTokens })
}

/**
 * What is in the context so far (blocks, their tokens, citations; passage ids and normalised texts by marker, raw
 * texts for overlaps) and the steps that add a passage to it.
 */
class Packer {
  used: number
  private truncatedOne = false
  readonly blocks: string[] = []
  readonly citations: Citation[] = []
  readonly markerOfId = new Map<string, number>()
  private readonly packedTexts: Array<{ marker: number; raw: string; normal: string }> = []

  constructor(private readonly options: PackOptions, frameTokens: number) {
    this.used = frameTokens
  }

  /** A block and its tokens: the sum over its parts (their junctions split cleanly, see formats.ts). */
  private measure(p: Passage): { block: string; tokens: number } {
    const parts = renderParts(this.options.format, p)
    let tokens = 0
    for (const part of parts) tokens += this.options.counter.count(part)
    return { block: parts.join(''), tokens }
  }

  /** The marker of a packed passage that holds `c` already (same id, or a text containing its own), else undefined. */
  private duplicateOf(c: Candidate): number | undefined {
    const byId = this.markerOfId.get(c.id)
    if (byId !== undefined) return byId
    const normal = normalise(c.text)
    return this.packedTexts.find((p) => p.normal.includes(normal))?.marker
  }

  /** `c` with the part an overlapping packed window holds cut off, or the marker of that window when nothing new is left. */
  private withoutOverlap(c: Candidate): Candidate | number {
    for (const p of this.packedTexts) {
      const overlap = overlapWith(p.raw, c.text)
      if (!overlap) continue
      // UTF-16 offsets: the overlap starts and ends at character boundaries of both texts
      const text = overlap.at === 'start' ? c.text.slice(overlap.chars).trimStart() : c.text.slice(0, c.text.length - overlap.chars).trimEnd()
      if (text === '') return p.marker
      return { ...c, overlap: { text, truncated: { at: overlap.at, reason: 'overlap', kept_chars: [...text].length, original_chars: [...c.text].length } } }
    }
    return c
  }

  /** Duplicate (a marker) or the candidate to place. */
  fresh(c: Candidate): Candidate | number {
    return this.duplicateOf(c) ?? this.withoutOverlap(c)
  }

  /**
   * Tries to put one passage in; returns how it went. `text` is first cut of what an overlapping window
   * already holds, then cut to the budget when it does not fit whole (once per context).
   */
  place(c: Candidate): { marker: number; tokens: number; truncated?: Truncation } | { dropped: 'budget' } {
    const { text, truncated } = c.overlap ?? { text: c.text, truncated: undefined }
    const marker = this.citations.length + 1
    const passage: Passage = { marker, kind: c.kind, id: c.id, source: c.source, mode: c.mode, ...(c.label ? { label: c.label } : {}), text, truncated: false }
    // once the budget is spent, a passage whose first part alone does not fit is not counted whole
    const left0 = this.options.maxTokens - this.used
    if (left0 < MIN_TRUNCATED_TOKENS || this.truncatedOne) {
      const first = renderParts(this.options.format, passage)[0]!
      if (first.length < text.length && this.options.counter.count(first) > left0) return { dropped: 'budget' }
    }
    const { block, tokens } = this.measure(passage)
    if (this.used + tokens <= this.options.maxTokens) {
      this.commit(c, block, tokens, text, marker)
      return { marker, tokens, ...(truncated ? { truncated } : {}) }
    }
    const left = this.options.maxTokens - this.used
    if (this.truncatedOne || left < MIN_TRUNCATED_TOKENS) return { dropped: 'budget' }
    // the longest prefix whose block fits (token counts grow with the prefix, near enough for a bisection; the fit is checked)
    const chars = [...text]
    const cut = (n: number) => this.measure({ ...passage, text: prefixOf(chars, n).trimEnd(), truncated: true })
    let lo = 0
    let hi = chars.length - 1
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2)
      if (cut(mid).tokens <= left) lo = mid
      else hi = mid - 1
    }
    // end at a sentence where one ends in the last third of what fits
    const kept = prefixOf(chars, lo)
    const sentenceEnd = Math.max(...['。', '！', '？', '. ', '! ', '? ', '\n'].map((s) => kept.lastIndexOf(s)))
    let n = lo
    if (sentenceEnd > 0 && [...kept.slice(0, sentenceEnd + 1)].length >= (2 * lo) / 3) n = [...kept.slice(0, sentenceEnd + 1)].length
    let { block: cutBlock, tokens: cutTokens } = cut(n)
    if (cutTokens > left) {
      n = lo
      ;({ block: cutBlock, tokens: cutTokens } = cut(n))
    }
    if (n === 0 || cutTokens > left) return { dropped: 'budget' }
    this.truncatedOne = true
    const keptText = prefixOf(chars, n).trimEnd()
    this.commit(c, cutBlock, cutTokens, keptText, marker)
    // a window already cut at its start and now at its end reports the budget cut (the larger one)
    return {
      marker, tokens: cutTokens,
      truncated: { at: 'end', reason: 'budget', kept_chars: [...keptText].length, original_chars: [...c.text].length }
    }
  }

  private commit(c: Candidate, block: string, tokens: number, text: string, marker: number): void {
    this.blocks.push(block)
    this.used += tokens
    this.markerOfId.set(c.id, marker)
    this.packedTexts.push({ marker, raw: text, normal: normalise(text) })
    this.citations.push({
      marker, label: `[${marker}]`, kind: c.kind, id: c.id, source: c.source,
      evidence_chunk_ids: [], related_markers: []
    })
  }
}

/** Packs one item (the `i`th, best first), then its evidence chunks when it has some; answers its manifest entry. */
function packItem(packer: Packer, item: PackItem, i: number, options: PackOptions): ManifestEntry {
  const rank = item.metadata.rank ?? i + 1
  const base = { id: item.id, rank, score: item.score }
  const weighted = item.mode === 'graphrag' && options.evidence !== 'none' ? evidenceByWeight(item) : []
  const chunkIds = weighted.map((e) => e.chunk_id)
  const available = chunkIds.filter((id) => options.chunk(id) !== undefined)
  if (options.minScore !== undefined && item.score < options.minScore) {
    return { ...base, status: 'dropped', reason: 'below_threshold', tokens: 0 }
  }
  const text = packedText(item)
  if (text === '' || (options.evidence === 'require' && item.mode === 'graphrag' && available.length === 0)) {
    return { ...base, status: 'dropped', reason: 'no_evidence', tokens: 0 }
  }
  const candidate: Candidate = { kind: 'item', id: item.id, source: item.source, mode: item.mode, text, ...(labelOf(item) ? { label: labelOf(item)! } : {}) }
  const toPlace = packer.fresh(candidate)
  if (typeof toPlace === 'number') {
    return { ...base, status: 'dropped', reason: 'duplicate', duplicate_of: toPlace, tokens: 0 }
  }
  const placed = packer.place(toPlace)
  if ('dropped' in placed) {
    return { ...base, status: 'dropped', reason: 'budget', tokens: 0 }
  }
  const citation = packer.citations[placed.marker - 1]!
  citation.evidence_chunk_ids = item.mode === 'hybrid' ? [item.id] : item.mode === 'graphrag' ? [...(item.metadata.source_chunk_ids ?? [])] : []
  const entry: ManifestEntry = {
    ...base, status: placed.truncated ? 'truncated' : 'included',
    marker: placed.marker, tokens: placed.tokens, ...(placed.truncated ? { truncated: placed.truncated } : {})
  }
  if (chunkIds.length === 0) return entry
  entry.evidence = weighted.map(({ chunk_id: chunkId, weight }, k): EvidenceEntry => {
    const result = (e: Omit<EvidenceEntry, 'chunk_id' | 'weight'>): EvidenceEntry => ({ chunk_id: chunkId, ...(weight !== undefined ? { weight } : {}), ...e })
    const chunk = options.chunk(chunkId)
    if (!chunk) return result({ status: 'missing', tokens: 0 })
    const known = packer.markerOfId.get(chunkId)
    if (known !== undefined) {
      citation.related_markers.push(known)
      return result({ status: 'duplicate', reason: 'duplicate', marker: known, tokens: 0 })
    }
    if (k >= options.maxEvidencePerItem) return result({ status: 'dropped', reason: 'budget', tokens: 0 })
    const evidence: Candidate = {
      kind: 'evidence', id: chunkId, source: chunk.source, mode: 'hybrid', text: chunk.text.trim(),
      label: `${chunk.title ? `${chunk.title}; ` : ''}evidence for [${placed.marker}]`
    }
    const toPut = packer.fresh(evidence)
    if (typeof toPut === 'number') {
      citation.related_markers.push(toPut)
      return result({ status: 'duplicate', reason: 'duplicate', marker: toPut, tokens: 0 })
    }
    const put = packer.place(toPut)
    if ('dropped' in put) return result({ status: 'dropped', reason: 'budget', tokens: 0 })
    citation.related_markers.push(put.marker)
    const own = packer.citations[put.marker - 1]!
    own.evidence_chunk_ids = [chunkId]
    own.related_markers = [placed.marker]
    return result({ status: put.truncated ? 'truncated' : 'included', marker: put.marker, tokens: put.tokens, ...(put.truncated ? { truncated: put.truncated } : {}) })
  })
  return entry
}

/**
 * The context of the packed blocks within its frame, or a {@link BudgetTooSmallError} when nothing fitted because of
 * the budget; an empty context when nothing was to be packed.
 */
function assemble(
  packer: Packer, items: readonly PackItem[], manifest: ManifestEntry[], options: PackOptions,
  { head, tail, frameTokens }: { head: string; tail: string; frameTokens: number }
): Packed {
  const { counter, format } = options
  if (packer.blocks.length === 0) {
    const first = manifest.find((m) => m.reason === 'budget')
    if (first) {
      const item = items.find((x) => x.id === first.id)!
      const needed = frameTokens + counter.count(renderBlock(format, {
        marker: 1, kind: 'item', id: item.id, source: item.source, mode: item.mode, text: [...item.text.trim()].slice(0, 8).join(''), truncated: true,
        ...(labelOf(item) ? { label: labelOf(item)! } : {})
      }))
      throw new BudgetTooSmallError(options.maxTokens, Math.max(needed, frameTokens + MIN_TRUNCATED_TOKENS), item.id, counter.name)
    }
    return { context: '', tokens: 0, citations: packer.citations, manifest }
  }

  // The blocks' counts add up when every junction splits cleanly (formats.ts), which the formats make sure
  // of; should one not, the whole is counted, and passages are dropped from the end while it is over.
  const pieces = [head, ...packer.blocks, tail].filter((x) => x !== '')
  const additive = pieces.every((x, i) => i === 0 || splitsCleanly(pieces[i - 1]!, x))
  let context = pieces.join('')
  let tokens = additive ? packer.used : counter.count(context)
  while (tokens > options.maxTokens && packer.blocks.length > 0) {
    packer.blocks.pop()
    const dropped = packer.citations.pop()!
    for (const c of packer.citations) c.related_markers = c.related_markers.filter((m) => m !== dropped.marker)
    for (const m of manifest) {
      if (m.marker === dropped.marker) Object.assign(m, { status: 'dropped', reason: 'budget', tokens: 0 }, { marker: undefined, truncated: undefined })
      for (const e of m.evidence ?? []) if (e.marker === dropped.marker) Object.assign(e, { status: 'dropped', reason: 'budget', tokens: 0, marker: undefined })
    }
    context = head + packer.blocks.join('') + tail
    tokens = counter.count(context)
  }
  if (packer.blocks.length === 0) throw new BudgetTooSmallError(options.maxTokens, frameTokens + MIN_TRUNCATED_TOKENS, items[0]!.id, counter.name)
  return { context, tokens, citations: packer.citations, manifest: manifest.map(clean) }
}

/**
 * A graphrag item's evidence chunks in the order they are packed: by weight, higher first (equal weights keep the
 * item's order), each once; an item without weighted evidence (an answer cached before lineage weights) gives its
 * `source_chunk_ids` in order.
 */
function evidenceByWeight(item: PackItem): Array<{ chunk_id: string; weight?: number }> {
  const { evidence, source_chunk_ids: ids } = item.metadata
  const listed: Array<{ chunk_id: string; weight?: number }> = Array.isArray(evidence) && evidence.length > 0
    ? evidence : (ids ?? []).map((chunk_id) => ({ chunk_id }))
  const seen = new Set<string>()
  return listed
    .filter((e) => !seen.has(e.chunk_id) && seen.add(e.chunk_id))
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (b.e.weight ?? 0) - (a.e.weight ?? 0) || a.i - b.i)
    .map(({ e }) => e)
}

/** Without the keys set to undefined while trimming. */
function clean(m: ManifestEntry): ManifestEntry {
  const out = Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as unknown as ManifestEntry
  if (out.evidence) out.evidence = out.evidence.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as unknown as EvidenceEntry)
  return out
}

