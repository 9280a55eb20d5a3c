import { readFile } from 'node:fs/promises'
import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { servedOpenApi } from '../src/openapi-document.js'

describe('openapi/openapi.json', () => {
  it('is exactly what the server serves (run `make openapi` after changing a route schema)', async () => {
    const committed = JSON.parse(await readFile('openapi/openapi.json', 'utf8')) as unknown
    expect(await servedOpenApi()).toEqual(committed)
  })

  it('is a valid OpenAPI document that documents every route and mode', async () => {
    const doc = await servedOpenApi() as { paths: Record<string, Record<string, unknown>> }
    await SwaggerParser.validate(structuredClone(doc) as never)
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/analyze', '/documents', '/documents/{id}', '/entities/{id}', '/episodes/{id}', '/healthz',
      '/ingest/documents', '/ingest/episodes', '/ingest/graph', '/readyz', '/retrieve'
    ])
    expect(JSON.stringify(doc.paths['/retrieve'])).toContain('"enum":["hybrid","graphrag","episodic"]')
  })
})
