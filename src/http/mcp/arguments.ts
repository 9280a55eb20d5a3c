import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'

/**
 * The protocol's invalid-params error (JSON-RPC -32602). Not the SDK's McpError, whose message already starts
 * with "MCP error -32602:", which the client would then print twice.
 */
export class InvalidArgumentsError extends Error {
  readonly code = ErrorCode.InvalidParams
}

/** A TypeBox schema as plain JSON Schema, for `tools/list` (the REST route's schema, published as is). */
export function jsonSchemaOf(schema: TSchema): { type: 'object'; [key: string]: unknown } {
  return JSON.parse(JSON.stringify(schema)) as { type: 'object'; [key: string]: unknown }
}

/**
 * The arguments when the schema accepts them; otherwise the protocol's invalid-params error, naming the
 * argument as the REST routes name a body field (`arguments/top_k must be <= 100`).
 */
export function checkArguments<T>(tool: string, schema: TSchema, args: unknown): T {
  const value = args ?? {}
  if (Value.Check(schema, value)) return value as T
  const errors = [...Value.Errors(schema, value)]
  // "schema is false" (an unknown property) is said better by the additionalProperties error that follows it
  const e = errors.find((x) => x.keyword !== 'boolean') ?? errors[0]!
  const params = e.params as { allowedValues?: unknown[]; additionalProperties?: string[]; requiredProperties?: string[] }
  const detail = params.allowedValues ? `: ${params.allowedValues.join(', ')}`
    : params.additionalProperties ? ` (${params.additionalProperties.map((p) => `"${p}"`).join(', ')})` : ''
  throw new InvalidArgumentsError(`${tool}: arguments${e.instancePath} ${e.message}${detail}`)
}
