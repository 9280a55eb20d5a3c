import { Type, type Static } from 'typebox'
import { CONTEXT_FORMATS } from '../context/formats.js'
import { TOKENIZERS } from '../context/tokenizers.js'
import { LegReportSchema, ModeSchema } from './recall-bundle.js'
import { MatchStrengthSchema, RetrieveResponseSchema } from './recall-item.js'
import { RetrieveBodySchema } from './retrieve.js'

/** The largest budget `/context` takes: more than any of today's models reads, and far more than 100 items fill. */
export const MAX_CONTEXT_TOKENS = 1_000_000

/** The budget and layout options that `/context` (and the MCP `retrieve` tool) add to a retrieve body. */
export const ContextOptionProperties = {
  max_tokens: Type.Integer({ minimum: 1, maximum: MAX_CONTEXT_TOKENS, description: `Token budget of \`context\`, 1..${MAX_CONTEXT_TOKENS}; the answer never exceeds it, counted with \`tokenizer\`.` }),
  tokenizer: Type.Optional(Type.Enum([...TOKENIZERS], {
    description: 'How tokens are counted: `o200k_base` (GPT-4o and later, the default), `cl100k_base` (GPT-4, GPT-3.5) or ' +
      '`characters` (one token per character, for another model: an over-estimate for most).'
  })),
  format: Type.Optional(Type.Enum([...CONTEXT_FORMATS], {
    description: '`markdown` (a `### [n] source` heading per passage, the default), `xml` (one `<source id="n">` element per ' +
      'passage inside `<context>`), `text` (`[n] source` then the text) or `jsonl` (one JSON object per line).'
  })),
  min_score: Type.Optional(Type.Number({ description: 'Items scoring below it are left out (`below_threshold` in the manifest). Default: none.' })),
  evidence: Type.Optional(Type.Enum(['include', 'none', 'require'], {
    description: 'graphrag: `include` (the default) packs the text of each item\'s evidence chunks after it, higher weight first ' +
      '(`metadata.evidence`: the item\'s score for its first chunk, score/√n for the n-th; a chunk or text already packed is not packed again); ' +
      '`require` also leaves out an item none of whose chunks the namespace holds (`no_evidence`); `none` packs the items alone.'
  })),
  max_evidence_per_item: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'graphrag: evidence chunks packed per item at most, default 2.' }))
}

export const ContextBodySchema = Type.Object({
  ...RetrieveBodySchema.properties,
  ...ContextOptionProperties
}, { additionalProperties: false })
export type ContextBody = Static<typeof ContextBodySchema>

const TruncationSchema = Type.Object({
  at: Type.Enum(['start', 'end'], { description: 'Which end of the text was cut.' }),
  reason: Type.Enum(['budget', 'overlap'], { description: '`budget`: the rest did not fit; `overlap`: that part is already in the context (an overlapping window).' }),
  kept_chars: Type.Integer({ description: 'Characters of the text kept.' }),
  original_chars: Type.Integer({ description: 'Characters of the whole text.' })
}, { description: 'Where and why the passage was cut.' })

const ReasonSchema = Type.Enum(['budget', 'duplicate', 'below_threshold', 'no_evidence'], {
  description: 'Why it is not in the context: `budget` (no room left), `duplicate` (its text is already there, see `duplicate_of`), ' +
    '`below_threshold` (score under `min_score`), `no_evidence` (no text, or under `evidence: require` no evidence chunk).'
})

const EvidenceEntrySchema = Type.Object({
  chunk_id: Type.String({ description: 'The evidence chunk id.' }),
  weight: Type.Optional(Type.Number({ description: 'Its lineage weight from the item\'s `metadata.evidence` (the item\'s score for its first chunk, score/√n for the n-th); evidence is packed higher weight first.' })),
  status: Type.Enum(['included', 'truncated', 'duplicate', 'missing', 'dropped'], {
    description: '`included`, `truncated`, `duplicate` (already in the context: see `marker`), `missing` (the namespace does not hold it) or `dropped` (see `reason`).'
  }),
  reason: Type.Optional(ReasonSchema),
  marker: Type.Optional(Type.Integer({ description: 'Its marker in the context (for a duplicate, the passage that holds it).' })),
  truncated: Type.Optional(TruncationSchema),
  tokens: Type.Integer({ description: 'Tokens its block took (0 when not packed).' })
}, { description: 'One evidence chunk of a graphrag item.' })

const ManifestEntrySchema = Type.Object({
  id: Type.String({ description: 'The recall item id.' }),
  rank: Type.Integer({ description: 'Its rank in the bundle, from 1.' }),
  score: Type.Number({ description: 'Its score in the bundle.' }),
  status: Type.Enum(['included', 'truncated', 'dropped'], { description: 'Whether its text is in the context whole, cut (see `truncated`), or not at all (see `reason`).' }),
  reason: Type.Optional(ReasonSchema),
  marker: Type.Optional(Type.Integer({ description: 'Its citation marker `[n]` in the context.' })),
  duplicate_of: Type.Optional(Type.Integer({ description: 'For a duplicate: the marker of the passage that already holds its text.' })),
  truncated: Type.Optional(TruncationSchema),
  tokens: Type.Integer({ description: 'Tokens its block took in the context (0 when dropped).' }),
  evidence: Type.Optional(Type.Array(EvidenceEntrySchema, { description: 'graphrag: what became of each of its evidence chunks.' }))
}, { description: 'What became of one item of the bundle.' })

const CitationSchema = Type.Object({
  marker: Type.Integer({ description: 'The marker number, from 1, in the order passages were packed; the same request gives the same markers.' }),
  label: Type.String({ description: 'The marker as written in the context, `[n]`.' }),
  kind: Type.Enum(['item', 'evidence'], { description: '`item` (a recall item) or `evidence` (a chunk a graphrag item cites).' }),
  id: Type.String({ description: 'The item id, or the chunk id of an evidence passage.' }),
  source: Type.String({ description: 'Where the text came from (document path, entity source, `episode:<id>`).' }),
  evidence_chunk_ids: Type.Array(Type.String(), { description: 'The chunks behind it: a hybrid chunk\'s own id, a graphrag item\'s `source_chunk_ids`, an evidence passage\'s chunk; none for an Episode.' }),
  related_markers: Type.Array(Type.Integer(), { description: 'For a graphrag item, the markers of its evidence passages (or of earlier passages holding them); for an evidence passage, the item it supports.' })
}, { description: 'One passage of the context and what to cite for it.' })

export const ContextResponseSchema = Type.Object({
  mode: ModeSchema,
  query: Type.String({ description: 'The question, as asked.' }),
  namespace: Type.String({ description: 'The namespace searched.' }),
  format: Type.Enum([...CONTEXT_FORMATS], { description: 'The format of `context`.' }),
  tokenizer: Type.Enum([...TOKENIZERS], { description: 'The tokenizer `tokens` and `max_tokens` are counted with.' }),
  max_tokens: Type.Integer({ description: 'The budget asked for.' }),
  tokens: Type.Integer({ description: 'Tokens of `context`, never more than `max_tokens`.' }),
  context: Type.String({ description: 'The packed passages, best first, each under its marker `[n]`; empty when the retrieval found nothing to pack (see `manifest`).' }),
  citations: Type.Array(CitationSchema, { description: 'One per passage in `context`, in marker order.' }),
  manifest: Type.Array(ManifestEntrySchema, { description: 'One per item the retrieval returned, in rank order: included, truncated or dropped, and why.' }),
  match_strength: MatchStrengthSchema,
  legs: Type.Array(LegReportSchema, { description: 'The retrieval\'s backend steps, as `/retrieve` reports them.' }),
  cached: Type.Boolean({ description: 'Whether the retrieval came from the response cache (the packing always runs).' }),
  packing_ms: Type.Number({ description: 'Time spent packing (counting tokens, rendering), in milliseconds.' }),
  took_ms: Type.Number({ description: 'Wall time of the request in the service, in milliseconds.' }),
  image_items: RetrieveResponseSchema.properties.image_items
})
export type ContextResponse = Static<typeof ContextResponseSchema>
