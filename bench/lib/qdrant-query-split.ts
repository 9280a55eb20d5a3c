/**
 * Where one Qdrant vector search's time goes, by payload selector: the HTTP round trip (request sent to the body
 * read), the server's own `time` in its answer, `JSON.parse` of the body, and the decoding of the points into
 * hits (the store's mapping of a payload onto a row). Raw `fetch`, as the client library does it underneath.
 */
export interface SplitSample {
  total_ms: number
  http_ms: number
  server_ms: number
  parse_ms: number
  decode_ms: number
  bytes: number
}

export type PayloadSelector = boolean | string[] | { include: string[] } | { exclude: string[] }

interface QueryAnswer { result: { points: { id: string; score: number; payload?: Record<string, unknown> }[] }; time: number }

/** One search with `with_payload: selector`, timed part by part; `decode` maps each point as the store would. */
export async function splitQuery(
  url: string, collection: string, namespace: string, vector: Float32Array, limit: number, selector: PayloadSelector,
  decode: (payload: Record<string, unknown> | undefined) => unknown
): Promise<SplitSample> {
  const body = JSON.stringify({
    query: Array.from(vector), limit, with_payload: selector, with_vector: false,
    filter: { must: [{ key: 'namespace', match: { value: namespace } }] }
  })
  const t0 = performance.now()
  const response = await fetch(`${url}/collections/${collection}/points/query`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' }, body
  })
  const text = await response.text()
  const t1 = performance.now()
  if (!response.ok) throw new Error(`qdrant answered ${response.status}: ${text.slice(0, 300)}`)
  const answer = JSON.parse(text) as QueryAnswer
  const t2 = performance.now()
  for (const point of answer.result.points) decode(point.payload)
  const t3 = performance.now()
  return {
    total_ms: t3 - t0, http_ms: t1 - t0, server_ms: answer.time * 1000, parse_ms: t2 - t1, decode_ms: t3 - t2,
    bytes: Buffer.byteLength(text)
  }
}
