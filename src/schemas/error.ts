import { Type, type Static } from 'typebox'

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'The HTTP status code, repeated.' }),
  code: Type.String({ description: 'Stable machine-readable code, `RECALL_<AREA>_<WHAT>` or Fastify\'s own `FST_…`.' }),
  error: Type.String({ description: 'HTTP reason phrase.' }),
  message: Type.String({ description: 'What is wrong, for a person.' })
}, { description: 'Every error answer has this shape.' })
export type ErrorBody = Static<typeof ErrorSchema>

export const errorExample = (statusCode: number, code: string, error: string, message: string) =>
  ({ statusCode, code, error, message })
