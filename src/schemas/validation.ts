/**
 * Schema validation as the HTTP layer does it, for every caller: the ajv options the app gives Fastify,
 * the message a failed check becomes (naming the field and the value refused), and `checkAgainst`, which
 * runs a schema with those same options outside a request (the CLI, the demo loader). So a body the CLI
 * accepts is one `POST` accepts, coerced the same way, and refused with the same words.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { TSchema } from 'typebox'

/**
 * The app's ajv options (`src/http/app.ts` hands them to Fastify, on top of Fastify's own defaults).
 * Unknown request fields are rejected (a misspelt option must not be ignored silently).
 * `x-examples` holds a request body's named examples for the OpenAPI document (an annotation, like `description`);
 * `x-limit` names the constant or variable behind a schema's bound, which a refusal then names (`schemaErrorMessage`).
 * `verbose` puts each failed schema and value on its error (a value of several forms is then reported by its
 * description, and every message can name the value it refused); `allowUnionTypes` admits a list of types
 * (metadata values: see src/schemas/ingest.ts). One error at a time (`allErrors: false`), as Fastify advises.
 */
export const AJV_OPTIONS = {
  removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false, verbose: true, allowUnionTypes: true,
  keywords: ['x-examples', 'x-limit']
} as const satisfies Options

/** Longest refused string quoted whole, in code points; a longer one is cut and its length given. */
const QUOTED_CHARS = 60

/** A refused value in a message: JSON when short, else its kind and size. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const chars = [...value]
    return chars.length <= QUOTED_CHARS ? JSON.stringify(value) : `${JSON.stringify(chars.slice(0, QUOTED_CHARS).join(''))}… (${chars.length} characters)`
  }
  if (value === undefined) return 'nothing'
  const json = JSON.stringify(value)
  if (json !== undefined && json.length <= QUOTED_CHARS) return json
  if (Array.isArray(value)) return `a list of ${value.length} items`
  if (typeof value === 'object' && value !== null) return `an object with ${Object.keys(value).length} keys`
  return String(value)
}

type VerboseError = ErrorObject & { schema?: unknown; parentSchema?: unknown; data?: unknown }

/** Keywords whose `data` is the object holding the problem (the message names the key instead). */
const CONTAINER_KEYWORDS = new Set(['required', 'additionalProperties', 'dependencies', 'dependentRequired', 'propertyNames'])

/** Keywords of a bound that `x-limit` names. */
const BOUND_KEYWORDS = new Set(['maxLength', 'maxItems', 'maxProperties', 'maximum'])

/**
 * The message of a failed check, prefixed by `dataVar` (`body`, `querystring`, …) and the field's path,
 * ending with the value refused: `body/arms/1/mode must be equal to one of the allowed values: hybrid,
 * graphrag, episodic (got "bogus")`.
 */
export function schemaErrorMessage(validationErrors: readonly ErrorObject[], dataVar: string): string {
  const errors = validationErrors as readonly VerboseError[]
  const got = (e: VerboseError) => (CONTAINER_KEYWORDS.has(e.keyword) ? '' : ` (got ${describeValue(e.data)})`)
  // A value that fits none of several forms (an anyOf, or a list of types): the schema's description says which.
  const any = errors.find((x) => x.keyword === 'anyOf' || (x.keyword === 'type' && Array.isArray(x.schema)))
  const described = (any?.parentSchema as { description?: unknown } | undefined)?.description
  if (any && typeof described === 'string') return `${dataVar}${any.instancePath} must be one of these forms: ${described}${got(any)}`
  // A union of constants (TypeBox's union of literals) is an enum by another name: list its values.
  const choice = errors.find((x) => x.keyword === 'anyOf' && Array.isArray(x.schema) &&
    (x.schema as unknown[]).every((s) => typeof s === 'object' && s !== null && 'const' in s))
  if (choice) {
    const values = (choice.schema as Array<{ const: unknown }>).map((s) => String(s.const)).join(', ')
    return `${dataVar}${choice.instancePath} must be equal to one of the allowed values: ${values}${got(choice)}`
  }
  const e = errors[0]!
  const where = `${dataVar}${e.instancePath}`
  const keyPatterns = Object.keys((e.parentSchema as { patternProperties?: object } | undefined)?.patternProperties ?? {})
  if (e.keyword === 'additionalProperties' && keyPatterns.length > 0) {
    return `${where}: key "${(e.params as { additionalProperty: string }).additionalProperty}" does not match ${keyPatterns.join(' or ')}`
  }
  const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues
  const extra = (e.params as { additionalProperty?: string }).additionalProperty
  const detail = allowed ? `: ${allowed.join(', ')}` : extra ? ` ("${extra}")` : ''
  const limit = (e.parentSchema as { 'x-limit'?: unknown } | undefined)?.['x-limit']
  const named = typeof limit === 'string' && BOUND_KEYWORDS.has(e.keyword) ? `, the limit ${limit}` : ''
  return `${where} ${e.message}${named}${detail}${got(e)}`
}

let shared: Ajv | undefined
function ajv(): Ajv {
  if (!shared) {
    // The app's options over Fastify's one other default that matters here; @fastify/ajv-compiler adds ajv-formats too.
    shared = new Ajv({ addUsedSchema: false, ...AJV_OPTIONS, keywords: [...AJV_OPTIONS.keywords] })
    ;(addFormatsModule as unknown as (a: Ajv) => void)(shared)
  }
  return shared
}

/**
 * A check of `schema` as a route's body check runs it: the same options, so the value is coerced and
 * given its defaults in place, and the same message. Returns undefined when the value fits.
 */
export function checkAgainst(schema: TSchema, dataVar = 'body'): (value: unknown) => string | undefined {
  let validate: ReturnType<Ajv['compile']> | undefined
  return (value) => {
    validate ??= ajv().compile(schema)
    return validate(value) ? undefined : schemaErrorMessage(validate.errors ?? [], dataVar)
  }
}
