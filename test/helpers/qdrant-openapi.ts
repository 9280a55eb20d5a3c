import { existsSync, readFileSync } from 'node:fs'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { QDRANT_OPENAPI } from './reference-data.js'

/** Qdrant's own OpenAPI document: QDRANT_OPENAPI_PATH, else `qdrant/openapi.json` under RECALL_SHARED_DIR or `../shared`. */
const QDRANT_OPENAPI_PATH = QDRANT_OPENAPI.path

/** One HTTP request as the server saw it: query values are the raw strings of the URL. */
export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string>
  body: unknown
}

export interface QdrantOpenApiValidator {
  /** `METHOD /template` of the operation the request matches, or undefined when the document has none. */
  operationOf(request: RecordedRequest): string | undefined
  /** Every way the request breaks the document (unknown route, bad path or query parameter, bad body); [] when valid. */
  validate(request: RecordedRequest): string[]
  /** Every way a JSON answer with `status` to `request` breaks the document's response schema; [] when valid. */
  validateResponse(request: RecordedRequest, status: number, body: unknown): string[]
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

interface Parameter {
  name: string
  in: string
  required?: boolean
  schema?: Json
}

interface Operation {
  key: string
  pattern: RegExp
  pathParams: string[]
  /** Path and query parameters as one object schema each (query values arrive as strings, so coerced). */
  validatePath: ValidateFunction
  validateQuery: ValidateFunction
  validateBody: ValidateFunction | undefined
  bodyRequired: boolean
  /** By response key of the document: `200`, `4XX`, `default`. */
  responses: Map<string, ValidateFunction>
}

const SCHEMA_ID = 'qdrant-openapi'

/**
 * Rewrites OpenAPI 3.0 schema dialect into what ajv (JSON Schema draft-07) accepts:
 * - `nullable: true` with a `type` becomes `type: [type, "null"]`; a lone `{nullable: true}` (Qdrant's `anyOf`
 *   alternative meaning "or null") becomes `{type: "null"}`; otherwise the schema is wrapped as `anyOf: [schema, null]`.
 * - `#/components/...` refs point into the registered components document.
 */
function toAjvSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toAjvSchema)
  if (node === null || typeof node !== 'object') return node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/')) {
      out[key] = `${SCHEMA_ID}${value}`
    } else {
      out[key] = toAjvSchema(value)
    }
  }
  if (out.nullable !== true) return out
  const { nullable: _, ...rest } = out
  if (Object.keys(rest).length === 0 || (Object.keys(rest).length === 1 && 'description' in rest)) {
    return { ...rest, type: 'null' }
  }
  if (typeof rest.type === 'string') {
    const withNull: JsonObject = { ...rest, type: [rest.type, 'null'] }
    if (Array.isArray(rest.enum)) withNull.enum = [...rest.enum, null]
    return withNull
  }
  return { anyOf: [rest, { type: 'null' }] }
}

function isUnsignedInteger(max: number) {
  return (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= max
}

function newAjv(coerceTypes: boolean): Ajv {
  // strict: false because OpenAPI keywords such as `example` are not JSON Schema keywords
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes })
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
  addFormats(ajv)
  ajv.addFormat('uint', { type: 'number', validate: isUnsignedInteger(Number.MAX_SAFE_INTEGER) })
  ajv.addFormat('uint64', { type: 'number', validate: isUnsignedInteger(Number.MAX_SAFE_INTEGER) })
  ajv.addFormat('uint32', { type: 'number', validate: isUnsignedInteger(2 ** 32 - 1) })
  ajv.addFormat('uint8', { type: 'number', validate: isUnsignedInteger(255) })
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) })
  ajv.addFormat('float', { type: 'number', validate: (n: number) => Number.isFinite(n) })
  ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) })
  // a date-time whose parts may be missing ("2024-01-01", "2024-01-01T10"); Qdrant parses it leniently
  ajv.addFormat('partial-date-time', /^\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?(Z|[+-]\d{2}:?\d{2})?$/)
  return ajv
}

function parameterSchema(params: Parameter[], where: 'path' | 'query'): Json {
  const own = params.filter((p) => p.in === where)
  return {
    type: 'object',
    properties: Object.fromEntries(own.map((p) => [p.name, p.schema ?? {}])),
    required: own.filter((p) => p.required).map((p) => p.name),
    // a parameter the document does not define is a mistake in the caller
    additionalProperties: false
  }
}

function describeErrors(where: string, validate: ValidateFunction): string[] {
  return (validate.errors ?? []).map((e) => `${where}${e.instancePath || ''} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)}`)
}

/** Loads Qdrant's OpenAPI document and compiles a validator for each operation in it. */
export function loadQdrantOpenApi(path: string = QDRANT_OPENAPI_PATH): QdrantOpenApiValidator {
  if (!existsSync(path)) {
    throw new Error(`${QDRANT_OPENAPI.missing} (the Qdrant adapter's requests are checked against it)`)
  }
  const doc = JSON.parse(readFileSync(path, 'utf8')) as JsonObject
  const components = toAjvSchema(doc.components ?? {}) as JsonObject
  const bodyAjv = newAjv(false)
  const paramAjv = newAjv(true)
  for (const ajv of [bodyAjv, paramAjv]) ajv.addSchema({ $id: SCHEMA_ID, components }, SCHEMA_ID)

  const operations: Operation[] = []
  for (const [template, item] of Object.entries(doc.paths as JsonObject)) {
    const itemObject = item as JsonObject
    const shared = (itemObject.parameters ?? []) as unknown as Parameter[]
    for (const [method, op] of Object.entries(itemObject)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue
      const opObject = op as JsonObject
      const params = [...shared, ...((opObject.parameters ?? []) as unknown as Parameter[])].map((p) => ({
        ...p,
        ...(p.schema !== undefined ? { schema: toAjvSchema(p.schema) } : {})
      }))
      const pathParams = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)')}$`)
      const requestBody = opObject.requestBody as JsonObject | undefined
      const content = requestBody?.content as JsonObject | undefined
      const jsonSchema = (content?.['application/json'] as JsonObject | undefined)?.schema
      operations.push({
        key: `${method.toUpperCase()} ${template}`,
        pattern,
        pathParams,
        validatePath: paramAjv.compile(parameterSchema(params, 'path') as object),
        validateQuery: paramAjv.compile(parameterSchema(params, 'query') as object),
        validateBody: jsonSchema === undefined ? undefined : bodyAjv.compile(toAjvSchema(jsonSchema) as object),
        bodyRequired: requestBody?.required === true,
        responses: new Map(
          Object.entries((opObject.responses ?? {}) as JsonObject).flatMap(([status, response]) => {
            const schema = (((response as JsonObject).content as JsonObject | undefined)?.['application/json'] as
              | JsonObject
              | undefined)?.schema
            return schema === undefined ? [] : [[status, bodyAjv.compile(toAjvSchema(schema) as object)] as const]
          })
        )
      })
    }
  }
  // literal segments beat templated ones (`/collections/aliases` before `/collections/{collection_name}`)
  operations.sort((a, b) => a.pathParams.length - b.pathParams.length)

  const find = (request: RecordedRequest): { op: Operation; values: string[] } | undefined => {
    for (const op of operations) {
      if (!op.key.startsWith(`${request.method.toUpperCase()} `)) continue
      const match = op.pattern.exec(request.path)
      if (match) return { op, values: match.slice(1).map((v) => decodeURIComponent(v)) }
    }
    return undefined
  }

  return {
    operationOf(request) {
      return find(request)?.op.key
    },
    validate(request) {
      const found = find(request)
      if (!found) return [`${request.method} ${request.path}: no such operation in Qdrant's OpenAPI document`]
      const { op, values } = found
      const errors: string[] = []
      const pathValues = Object.fromEntries(op.pathParams.map((name, i) => [name, values[i]]))
      if (!op.validatePath(pathValues)) errors.push(...describeErrors(`${op.key} path`, op.validatePath))
      const query = { ...request.query }
      if (!op.validateQuery(query)) errors.push(...describeErrors(`${op.key} query`, op.validateQuery))
      if (request.body === undefined) {
        if (op.bodyRequired) errors.push(`${op.key}: a request body is required`)
      } else if (!op.validateBody) {
        errors.push(`${op.key}: takes no request body`)
      } else if (!op.validateBody(request.body)) {
        errors.push(...describeErrors(`${op.key} body`, op.validateBody))
      }
      return errors
    },
    validateResponse(request, status, body) {
      const found = find(request)
      if (!found) return [`${request.method} ${request.path}: no such operation in Qdrant's OpenAPI document`]
      const { op } = found
      const validate =
        op.responses.get(String(status)) ?? op.responses.get(`${String(status)[0]}XX`) ?? op.responses.get('default')
      if (!validate) return [`${op.key}: the document defines no JSON answer for ${status}`]
      return validate(body) ? [] : describeErrors(`${op.key} response ${status}`, validate)
    }
  }
}
