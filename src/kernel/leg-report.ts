import { Type, type Static } from 'typebox'

const LegStatusSchema = Type.Enum(['ok', 'timeout', 'error', 'skipped'], {
  description: '`ok`; `timeout` or `error` (see `reason`); `skipped` when the step was not asked for or had nothing to do.'
})

/** One backend step of a request: its outcome, its time and how many candidates it produced. */
export const LegReportSchema = Type.Object({
  name: Type.String({ description: 'Backend step, e.g. `vector`, `lexical`, `graph`.' }),
  status: LegStatusSchema,
  took_ms: Type.Number({ description: 'Wall time of the step in milliseconds.' }),
  hits: Type.Integer({ description: 'Candidates the step produced.' }),
  reason: Type.Optional(Type.String({ description: 'Why the step did not answer `ok`.' }))
})
export type LegReport = Static<typeof LegReportSchema>
