import { Type, type Static } from 'typebox'
import { NamespaceSchema } from '../../schemas/common.js'

const Text = (description: string) => Type.String({ description })

/** The longest entity-link description, in characters (code points). */
export const MAX_LINK_DESCRIPTION_CHARS = 2000

const EntityRefSchema = Type.Union([
  Type.String({ description: 'Entity id, listed in `entities` of the same request or already stored. Prefer the object form with a description.' }),
  Type.Object({
    id: Text('Entity id.'),
    description: Type.Optional(Text(
      'What the entity is or did in this Episode (or facet), e.g. "本次改造只动它的响应层"; at most 2,000 characters. ' +
      'It goes into the edge text (docs/episodic.md, difference 7), so each Episode linked to the entity gets its own ' +
      'edge text and cost; without it every such Episode shares the entity\'s own description.')),
    edge_text: Type.Optional(Text('Edge label; generated when absent (docs/episodic.md, "Edge texts").'))
  })
])

export const EpisodesIngestBodySchema = Type.Object({
  namespace: Type.Optional(NamespaceSchema),
  entities: Type.Optional(Type.Array(Type.Object({
    id: Text('Entity id.'),
    name: Text('Entity name, embedded into `Entity_name`.'),
    description: Type.Optional(Text('Entity description.'))
  }))),
  episodes: Type.Array(Type.Object({
    id: Text('Episode id.'),
    name: Text('Title.'),
    summary: Text('Summary, embedded into `Episode_summary`; may use `【title】content` sections.'),
    signature: Type.Optional(Type.String()),
    mentioned_time_start: Type.Optional(Text('ISO 8601.')),
    mentioned_time_end: Type.Optional(Text('ISO 8601.')),
    mentioned_time_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    mentioned_time_text: Type.Optional(Type.String()),
    created_at: Type.Optional(Text('ISO 8601.')),
    entities: Type.Optional(Type.Array(EntityRefSchema)),
    facets: Type.Optional(Type.Array(Type.Object({
      id: Text('Facet id.'),
      search_text: Text('Embedded into `Facet_search_text`.'),
      facet_type: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      anchor_text: Type.Optional(Text('Embedded into `Facet_anchor_text`.')),
      aliases: Type.Optional(Type.Array(Type.String())),
      edge_text: Type.Optional(Text('has_facet edge label; generated when absent.')),
      entities: Type.Optional(Type.Array(EntityRefSchema)),
      points: Type.Optional(Type.Array(Type.Object({
        id: Text('FacetPoint id.'),
        search_text: Text('Embedded into `FacetPoint_search_text`.'),
        description: Type.Optional(Type.String()),
        aliases: Type.Optional(Type.Array(Type.String())),
        edge_text: Type.Optional(Text('has_point edge label; generated when absent.'))
      })))
    })))
  }))
}, { description: 'Episodes with their facets, points and entities (docs/episodic.md).' })
export type EpisodesIngestBody = Static<typeof EpisodesIngestBodySchema>
export type EntityRef = Static<typeof EntityRefSchema>
