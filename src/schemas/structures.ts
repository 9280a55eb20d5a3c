import { Type } from 'typebox'

const PARTS = 'what was imported through /ingest/graph and /ingest/episodes (`imported`), what was derived from the ' +
  'namespace\'s documents (`derived`, docs/derivation.md) or `both` (an imported entity wins a name clash and the derived ' +
  'one\'s evidence joins it)'

/** What graphrag and episodic read in a namespace: its stored setting (`PUT /namespaces/{ns}/retrieval-defaults`). */
export const StructuresSchema = Type.Union([Type.Literal('imported'), Type.Literal('derived'), Type.Literal('both')], {
  description: `What graphrag and episodic read in the namespace: ${PARTS}. Absent: the derived part only where nothing ` +
    'was imported.'
})

/** The same, asked by one request: it wins over the namespace's setting for that request. */
export const RequestStructuresSchema = Type.Union([Type.Literal('imported'), Type.Literal('derived'), Type.Literal('both')], {
  description: `graphrag and episodic only: what this request reads, ${PARTS}; it wins over the namespace's \`structures\` ` +
    'setting (`PUT /namespaces/{ns}/retrieval-defaults`). Absent: that setting, else the derived part only where nothing was imported.'
})
