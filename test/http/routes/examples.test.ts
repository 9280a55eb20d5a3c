import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CompareResponseSchema } from '../../../src/schemas/compare.js'
import { compareBodyExamples, compareResponseExamples, retrieveBodyExamples, retrieveResponseExamples } from '../../../src/schemas/examples.js'
import { RetrieveResponseSchema } from '../../../src/schemas/recall-item.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

// The Swagger UI examples must stay valid: a person picks one and presses Execute.
let t: TestApp
beforeAll(async () => { t = await buildTestApp() })
afterAll(async () => t.close())

describe('named examples', () => {
  it.each(Object.entries(retrieveBodyExamples))('POST /retrieve example %s is accepted', async (_name, example) => {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: example.value })
    expect(r.statusCode, r.body).toBe(200)
  })

  it.each(Object.entries(compareBodyExamples))('POST /retrieve/compare example %s is accepted', async (_name, example) => {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve/compare', payload: example.value })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().arms).toHaveLength(example.value.arms.length)
  })

  it('response examples match the response schemas, each named after its mode', () => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    const retrieve = ajv.compile(RetrieveResponseSchema)
    for (const [name, example] of Object.entries(retrieveResponseExamples)) {
      expect(retrieve(example.value), `${name}: ${ajv.errorsText(retrieve.errors)}`).toBe(true)
      expect(name.split('_')[0]).toBe(example.value.mode)
    }
    expect(retrieveResponseExamples.graphrag_meaning.value.recall_bundle[0]!.metadata).toMatchObject({ matched_by: 'meaning', hop: 0, similarity: expect.any(Number) })
    const compare = ajv.compile(CompareResponseSchema)
    for (const [name, example] of Object.entries(compareResponseExamples)) {
      expect(compare(example.value), `${name}: ${ajv.errorsText(compare.errors)}`).toBe(true)
    }
  })
})
