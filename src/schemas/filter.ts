import { Type, type Static } from 'typebox'
import { episodicFilter } from '../../adapters/episodic/spec.js'
import { graphragFilter } from '../../adapters/graphrag/spec.js'
import { hybridFilter } from '../../adapters/hybrid/spec.js'
import { MODE_DEFINITIONS } from '../modes.js'


/**
 * `filter` of `POST /retrieve` and of each compare arm: which items a mode may return, applied before ranking.
 * Every key belongs to one mode; its parts are combined with AND.
 */
export const RetrieveFilterSchema = Type.Object({
  ...Object.assign({}, ...MODE_DEFINITIONS.map((d) => d.filter)) as typeof hybridFilter & typeof graphragFilter & typeof episodicFilter
}, {
  additionalProperties: false, minProperties: 1,
  description: 'Which items may come back, applied by every leg before it ranks, so `top_k` items come back while that many ' +
    'match, and ranks are ranks among the matching items. `doc_ids`, `source_prefix` and `metadata` are hybrid\'s, ' +
    '`entity_types` graphrag\'s, `time_range` episodic\'s; all given parts must hold. The response echoes the normalised ' +
    'filter in `filter` and in each item\'s `metadata.filter`.'
})
export type RetrieveFilter = Static<typeof RetrieveFilterSchema>
