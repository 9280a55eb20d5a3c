import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { analyze } from '../../kernel/cjk-analyzer.js'
import { AnalyzeBodySchema, AnalyzeResponseSchema } from '../../schemas/analyze.js'
import { ErrorSchema } from '../../schemas/error.js'

const analyzeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/analyze', {
    schema: {
      tags: ['analyze'],
      summary: 'Tokens of a text as the lexical (BM25) index sees them',
      description: 'NFKC width folding, lowercase, CJK bigrams, English stop words dropped (after Lucene\'s CJKAnalyzer).',
      body: AnalyzeBodySchema,
      response: {
        200: { ...AnalyzeResponseSchema, description: 'The tokens in order', example: { tokens: ['api', '流式', '式返', '返回'] } },
        400: { ...ErrorSchema, description: 'Malformed body' }
      }
    }
  }, async (request) => ({ tokens: analyze(request.body.text) }))
}

export default analyzeRoutes
