import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { checkAgainst, describeValue } from '../../src/schemas/validation.js'

describe('describeValue', () => {
  it.each([
    ['bogus', '"bogus"'],
    ['', '""'],
    [7, '7'],
    [false, 'false'],
    [null, 'null'],
    [undefined, 'nothing'],
    [[1, 2], '[1,2]'],
    [{ a: 1 }, '{"a":1}'],
    ['字'.repeat(61), `"${'字'.repeat(60)}"… (61 characters)`],
    [Array.from({ length: 40 }, (_, i) => i), 'a list of 40 items'],
    [Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, i])), 'an object with 20 keys']
  ])('%j', (value, text) => {
    expect(describeValue(value)).toBe(text)
  })
})

describe('a schema check names the field and the value it refused', () => {
  const schema = Type.Object({
    mode: Type.Union([Type.Literal('hybrid'), Type.Literal('graphrag')]),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    id: Type.Optional(Type.String({ pattern: '^[a-z]+$' })),
    tags: Type.Optional(Type.Array(Type.String(), { maxItems: 2 }))
  }, { additionalProperties: false })
  const check = checkAgainst(schema, 'querystring')
  it.each([
    [{ mode: 'bogus' }, 'querystring/mode must be equal to one of the allowed values: hybrid, graphrag (got "bogus")'],
    [{ mode: 'hybrid', top_k: 0 }, 'querystring/top_k must be >= 1 (got 0)'],
    [{ mode: 'hybrid', top_k: 2.5 }, 'querystring/top_k must be integer (got 2.5)'],
    [{ mode: 'hybrid', id: 'A1' }, 'querystring/id must match pattern "^[a-z]+$" (got "A1")'],
    [{ mode: 'hybrid', tags: ['a', 'b', 'c'] }, 'querystring/tags must NOT have more than 2 items (got ["a","b","c"])'],
    // The key is named; the object around it is not quoted.
    [{ mode: 'hybrid', colour: 'red' }, 'querystring must NOT have additional properties ("colour")'],
    [{}, "querystring must have required property 'mode'"]
  ])('%j', (value, message) => {
    expect(check(value)).toBe(message)
  })

  it('coerces as the routes do and passes a value that fits', () => {
    const value: Record<string, unknown> = { mode: 'hybrid', top_k: '5', tags: 'one' }
    expect(check(value)).toBeUndefined()
    expect(value).toEqual({ mode: 'hybrid', top_k: 5, tags: ['one'] })
  })
})
