import type { RouteOptions } from 'fastify'
import { errorExample } from '../../schemas/error.js'

/** An error answer a plugin can give, as the OpenAPI document shows it. */
export interface DocumentedError {
  description: string
  code: string
  error: string
  message: string
}

/**
 * Adds `answers` (status and error) to the response schemas of `route`, each as `schema` with its description
 * and an example body, so the OpenAPI document lists them; a status the route declares itself is kept.
 */
export function documentErrorResponses(
  route: RouteOptions,
  schema: object,
  answers: ReadonlyArray<readonly [status: string, answer: DocumentedError]>
): void {
  const response = { ...((route.schema?.response as Record<string, unknown> | undefined) ?? {}) }
  for (const [status, answer] of answers) {
    if (response[status] !== undefined) continue
    const example = errorExample(Number(status), answer.code, answer.error, answer.message)
    response[status] = { ...schema, description: answer.description, example }
  }
  route.schema = { ...route.schema, response }
}
