import { Type, type Static } from 'typebox'
import { MODE_NAMES } from '../modes.js'

export { LegReportSchema,    } from '../kernel/leg-report.js'

/** The registered modes (src/modes.ts). */
export const ModeSchema = Type.Enum([...MODE_NAMES], {
  description: 'Which retrieval path runs for this request.'
})
export type Mode = Static<typeof ModeSchema>
export const MODES: readonly Mode[] = MODE_NAMES
