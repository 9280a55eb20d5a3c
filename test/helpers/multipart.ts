/** A multipart/form-data body as a browser or curl sends it (Node's own FormData encoder), for `app.inject`. */
export async function formBody(files: ReadonlyArray<{ name: string; bytes: Uint8Array }>, fields: Record<string, string> = {}): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  for (const f of files) form.append('files', new Blob([new Uint8Array(f.bytes)]), f.name)
  const request = new Request('http://recall.test/', { method: 'POST', body: form })
  return { payload: Buffer.from(await request.arrayBuffer()), headers: { 'content-type': request.headers.get('content-type')! } }
}
