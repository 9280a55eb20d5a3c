import { readFile } from 'node:fs/promises'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { servedOpenApi } from '../src/http/openapi-document.js'

describe('openapi/openapi.json', () => {
  it('is exactly what the server serves (run `make openapi` after changing a route schema)', async () => {
    const committed = JSON.parse(await readFile('openapi/openapi.json', 'utf8')) as unknown
    expect(await servedOpenApi()).toEqual(committed)
  })

  it('is a valid OpenAPI document that documents every route and mode', async () => {
    const doc = await servedOpenApi() as { paths: Record<string, Record<string, unknown>> }
    await SwaggerParser.validate(structuredClone(doc) as never)
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/analyze', '/context', '/conversations/{id}', '/documents', '/documents/unchanged', '/documents/{id}', '/documents/{id}/rebuild', '/entities/{id}', '/episodes/{id}', '/evaluate', '/evaluate/jobs/{id}', '/healthz', '/images/{id}',
      '/ingest/conversations', '/ingest/documents', '/ingest/episodes', '/ingest/files', '/ingest/graph', '/ingest/jobs/{id}', '/namespaces', '/namespaces/{namespace}', '/namespaces/{namespace}/retrieval-defaults',
      '/readyz', '/retrieve', '/retrieve/compare'
    ])
    expect(JSON.stringify(doc.paths['/retrieve'])).toContain('"enum":["hybrid","graphrag","episodic"]')
  })

  it('describes every option and response field of /retrieve and /retrieve/compare', async () => {
    const doc = await servedOpenApi() as { paths: Record<string, Record<string, Operation>> }
    const undescribed: string[] = []
    for (const route of ['/retrieve', '/retrieve/compare', '/context']) {
      for (const [method, op] of Object.entries(doc.paths[route]!)) {
        const at = `${method.toUpperCase()} ${route}`
        for (const p of op.parameters ?? []) if (!p.description) undescribed.push(`${at} ?${p.name}`)
        const body = op.requestBody?.content['application/json']?.schema
        if (body) collectUndescribed(body, `${at} body`, undescribed)
        for (const [status, r] of Object.entries(op.responses)) {
          const schema = r.content?.['application/json']?.schema
          if (schema) collectUndescribed(schema, `${at} ${status}`, undescribed)
        }
      }
    }
    expect(undescribed).toEqual([])
  })

  it('offers a named example per mode on POST /retrieve and several on /retrieve/compare', async () => {
    const doc = await servedOpenApi() as { paths: Record<string, Record<string, Operation>> }
    const names = (op: Operation) => ({
      body: Object.keys(op.requestBody?.content['application/json']?.examples ?? {}),
      ok: Object.keys(op.responses['200']?.content?.['application/json']?.examples ?? {})
    })
    expect(names(doc.paths['/retrieve']!.post!)).toEqual({ body: ['hybrid', 'hybrid_graph', 'hybrid_lexical', 'hybrid_filtered', 'graphrag', 'graphrag_meaning', 'episodic', 'read_your_writes'], ok: ['hybrid', 'graphrag', 'graphrag_meaning', 'episodic'] })
    expect(names(doc.paths['/retrieve']!.get!).ok).toEqual(['hybrid', 'graphrag', 'graphrag_meaning', 'episodic'])
    expect(names(doc.paths['/retrieve/compare']!.post!)).toEqual({ body: ['hybrid_vs_graphrag', 'hybrid_legs', 'three_modes'], ok: ['hybrid_vs_graphrag', 'failed_arm'] })
    // /context: every mode and every format has an example
    const context = ['hybrid_markdown', 'graphrag_xml', 'episodic_text', 'hybrid_jsonl']
    expect(names(doc.paths['/context']!.post!)).toEqual({ body: context, ok: context })
  })
})

interface Schema { description?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[] }
interface Media { schema?: Schema; examples?: Record<string, unknown> }
interface Operation {
  parameters?: { name: string; description?: string }[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
}

/** Every property, at any depth, that has no description. */
function collectUndescribed(schema: Schema, path: string, out: string[]): void {
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (!property.description) out.push(`${path}.${name}`)
    collectUndescribed(property, `${path}.${name}`, out)
  }
  if (schema.items) collectUndescribed(schema.items, `${path}[]`, out)
  for (const alternative of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) collectUndescribed(alternative, path, out)
}
