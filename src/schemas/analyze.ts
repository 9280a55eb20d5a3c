import { Type } from 'typebox'

export const AnalyzeBodySchema = Type.Object({
  text: Type.String({ maxLength: 100_000, description: 'Text to run through the lexical analyzer.' })
}, { additionalProperties: false })

export const AnalyzeResponseSchema = Type.Object({
  tokens: Type.Array(Type.String(), { description: 'The analyzer\'s tokens in order, as the BM25 index sees them.' })
})
