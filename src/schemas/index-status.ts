/** The index status of a document and of a namespace (docs/api.md, "Index status"). */
import { Type } from 'typebox'
import { CHANNELS } from '../corpus/index-status/channels.js'

const Count = (description: string) => Type.Integer({ minimum: 0, description })

const ChannelStateSchema = Type.Union([Type.Literal('done'), Type.Literal('pending'), Type.Literal('failed'), Type.Literal('off')], {
  description: '`done`: the index holds what the document\'s stored chunks give; `pending`: not yet, or no longer (a rebuild ' +
    'restores it); `failed`: its last derivation failed (`reason`); `off`: this service does not build this index (`reason` says which setting).'
})

const ChunkCountsSchema = Type.Object({
  indexed: Count('Chunks the index holds.'),
  expected: Count('Chunks the catalog stores.')
}, { description: 'Chunk indexes (`vectors`, `lexical`): the document\'s chunks held, of those stored.' })

const ItemCountsSchema = Type.Object({
  derived: Count('Items the index holds of the document now: derived entities and relations it has a part in, or its derived Episodes.'),
  expected: Count('Items its last recorded derivation wrote.')
}, { description: 'Derived indexes (`derived_graph`, `derived_episodes`).' })

const ChannelStatusSchema = Type.Object({
  state: ChannelStateSchema,
  reason: Type.Optional(Type.String({ description: 'Why it is not `done`.' })),
  chunks: Type.Optional(ChunkCountsSchema),
  items: Type.Optional(ItemCountsSchema)
})

const CHANNEL_DESCRIPTIONS: Record<(typeof CHANNELS)[number], string> = {
  vectors: 'The dense vectors of its chunks (vector store).',
  lexical: 'Its chunks in the lexical (BM25) index.',
  derived_graph: 'Its part in the derived knowledge graph (DERIVED_GRAPH, LLM_EXTRACTION).',
  derived_episodes: 'Its derived Episodes (DERIVED_EPISODES).',
  entity_vectors: 'The vectors of the names and aliases of the entities derived from it (ENTITY_VECTORS), embedded in the background after each graph write; `items` counts names.'
}

export const DocumentIndexStatusSchema = Type.Object(
  Object.fromEntries(CHANNELS.map((c) => [c, Type.Optional({ ...ChannelStatusSchema, description: CHANNEL_DESCRIPTIONS[c] })])),
  { description: 'Per channel, whether the document\'s index is built (docs/api.md, "Index status").' }
)

const ChannelSumsSchema = Type.Object({
  documents: Type.Object({ done: Count('Documents done.'), pending: Count('Documents pending.'), failed: Count('Documents failed.'), off: Count('Documents of a channel this service does not build.') }),
  chunks: Type.Optional(ChunkCountsSchema),
  items: Type.Optional(ItemCountsSchema)
})

export const NamespaceIndexStatusSchema = Type.Object(
  Object.fromEntries(CHANNELS.map((c) => [c, Type.Optional({ ...ChannelSumsSchema, description: CHANNEL_DESCRIPTIONS[c] })])),
  { description: 'Per channel, its documents by state and the sums of their counts.' }
)

export const documentStatusExample = {
  vectors: { state: 'done', chunks: { indexed: 4, expected: 4 } },
  lexical: { state: 'pending', reason: '1 of 4 chunk(s) are not in the lexical index; rebuild "lexical" restores them', chunks: { indexed: 3, expected: 4 } },
  derived_graph: {
    state: 'failed', items: { derived: 12, expected: 12 },
    reason: 'LLM extraction failed for 2 of 4 chunk(s): every attempt timed out or was refused (LLM_TIMEOUT_MS, LLM_RETRIES); only the rules\' part is derived; rebuild "derived_graph" asks again'
  },
  derived_episodes: { state: 'done', items: { derived: 1, expected: 1 } },
  entity_vectors: { state: 'pending', reason: '3 of 9 name(s) wait for the background applier', items: { derived: 6, expected: 9 } }
}
