/** JSON calls to the running service for the command-line tools (RECALL_URL, RECALL_API_KEY). */

export const serviceUrl = (given?: string): string =>
  (given ?? process.env.RECALL_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(/\/$/, '')

export async function callService<T>(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const key = process.env.RECALL_API_KEY
  let response: Response
  try {
    response = await fetch(`${url}${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
  } catch (error) {
    throw new Error(`cannot reach the service at ${url} (${(error as Error).message}); start it (make run) or pass --url`)
  }
  const text = await response.text()
  const parsed = text === '' ? undefined : JSON.parse(text) as T
  if (response.status >= 400) {
    const message = (parsed as { message?: string } | undefined)?.message ?? text
    throw new Error(`${method} ${path}: ${response.status} ${message}`)
  }
  return { status: response.status, body: parsed as T }
}
