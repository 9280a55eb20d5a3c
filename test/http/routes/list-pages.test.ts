/**
 * GET /documents and GET /namespaces answer a page at a time: `limit` (default 1,000, at most 10,000) and the
 * `next_cursor` of the page before; without either, a list of up to 1,000 entries is answered whole, as before paging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

let t: TestApp
beforeAll(async () => { t = await buildTestApp({ DERIVED_GRAPH: 'false', RATE_LIMIT_MAX: '0' }) }, 300_000)
afterAll(async () => t?.close())

interface DocumentPage { documents: { id: string }[]; total: number; chunks: number; next_cursor?: string }
const get = async <T>(url: string) => {
  const r = await t.app.inject({ method: 'GET', url })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as T
}
const ingest = async (namespace: string, ids: readonly string[]) => {
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: ids.map((id) => ({ id, text: `第${id}篇。` })) } })
  expect(r.statusCode, r.body).toBe(200)
}
/** Every page of a document list, following `next_cursor`. */
async function allPages(namespace: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await get<DocumentPage>(`/documents?namespace=${namespace}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(page.documents.length).toBeLessThanOrEqual(limit)
    ids.push(...page.documents.map((d) => d.id))
    cursor = page.next_cursor
    pages += 1
  } while (cursor)
  return { ids, pages }
}

describe('GET /documents, a page at a time', () => {
  // ids whose order is not their insertion order: upper case before lower, digits by character, CJK last
  const ids = ['b', 'A', 'a10', 'a2', 'Z', '文档', 'a1', 'c', 'B', 'a', 'x-1', 'x_1', '0', '9', '10']

  it('pages through every document once, in id order, and counts the whole namespace on each page', async () => {
    await ingest('paged', ids)
    const { ids: paged, pages } = await allPages('paged', 4)
    expect(paged).toEqual([...ids].sort())
    expect(pages).toBe(Math.ceil(ids.length / 4))
    const first = await get<DocumentPage>('/documents?namespace=paged&limit=4')
    expect(first.total).toBe(ids.length)
    expect(first.chunks).toBe(ids.length)
    // a last page that is exactly full has no cursor after it
    expect((await get<DocumentPage>(`/documents?namespace=paged&limit=${ids.length}`)).next_cursor).toBeUndefined()
  })

  it('keeps going from where it was when documents come and go between pages', async () => {
    const sorted = [...ids].sort()
    const first = await get<DocumentPage>('/documents?namespace=paged&limit=5')
    expect(first.documents.map((d) => d.id)).toEqual(sorted.slice(0, 5))
    // one before the cursor, one after it, and the next one the page would have started with deleted
    await ingest('paged', ['(early)', 'zz-late'])
    expect((await t.app.inject({ method: 'DELETE', url: `/documents/${encodeURIComponent(sorted[5]!)}?namespace=paged` })).statusCode).toBe(200)
    const rest: string[] = []
    let cursor = first.next_cursor
    while (cursor) {
      const page = await get<DocumentPage>(`/documents?namespace=paged&limit=5&cursor=${cursor}`)
      rest.push(...page.documents.map((d) => d.id))
      cursor = page.next_cursor
    }
    expect(rest).toEqual([...sorted.slice(6), 'zz-late'].sort())
  })

  it('answers a namespace of up to 1,000 documents whole without limit (as before paging), and the first 1,000 of a larger one', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `m${String(i).padStart(4, '0')}`)
    await ingest('many', many.slice(0, 1000))
    const whole = await get<DocumentPage>('/documents?namespace=many')
    expect(whole.documents.map((d) => d.id)).toEqual(many.slice(0, 1000))
    expect(whole.next_cursor).toBeUndefined()
    await ingest('many', many.slice(1000))
    const capped = await get<DocumentPage>('/documents?namespace=many')
    expect(capped.documents).toHaveLength(1000)
    expect(capped.total).toBe(1001)
    const next = await get<DocumentPage>(`/documents?namespace=many&cursor=${capped.next_cursor}`)
    expect(next.documents.map((d) => d.id)).toEqual(['m1000'])
    expect(next.next_cursor).toBeUndefined()
    expect((await get<DocumentPage>('/documents?namespace=many&limit=10000')).documents).toHaveLength(1001)
  }, 300_000)

  it.each([
    ['limit=0', /^querystring\/limit must be >= 1 \(got 0\)/],
    ['limit=10001', /^querystring\/limit must be <= 10000 \(got 10001\)/],
    ['limit=ten', /^querystring\/limit must be integer \(got "ten"\)/],
    ['cursor=not*a*cursor', /^querystring\/cursor is not a cursor of GET \/documents \(got "not\*a\*cursor"\)/],
    // a cursor of the namespace list is not one of this list
    [`cursor=${Buffer.from(JSON.stringify(['namespaces', 'paged'])).toString('base64url')}`, /^querystring\/cursor is not a cursor of GET \/documents/]
  ])('refuses %s with a 400 naming it', async (query, message) => {
    const r = await t.app.inject({ method: 'GET', url: `/documents?namespace=paged&${query}` })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toMatch(message)
  })
})

describe('GET /namespaces, a page at a time', () => {
  it('pages through the same namespaces, in name order, as the whole list', async () => {
    for (const ns of ['ns-e', 'ns-a', 'ns-c', 'ns-b', 'ns-d']) {
      const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, entities: [{ id: 'x', name: `实体${ns}` }] } })
      expect(r.statusCode, r.body).toBe(200)
    }
    const whole = await get<{ namespaces: { namespace: string }[]; next_cursor?: string }>('/namespaces')
    expect(whole.next_cursor).toBeUndefined()
    const names = whole.namespaces.map((n) => n.namespace)
    expect(names).toEqual(expect.arrayContaining(['many', 'ns-a', 'ns-b', 'ns-c', 'ns-d', 'ns-e', 'paged']))
    expect(names).toEqual([...names].sort())
    const paged: { namespace: string }[] = []
    let cursor: string | undefined
    do {
      const page = await get<{ namespaces: { namespace: string }[]; next_cursor?: string }>(`/namespaces?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.namespaces.length).toBeLessThanOrEqual(2)
      paged.push(...page.namespaces)
      cursor = page.next_cursor
    } while (cursor)
    expect(paged).toEqual(whole.namespaces)
    const r = await t.app.inject({ method: 'GET', url: `/namespaces?cursor=${Buffer.from(JSON.stringify(['documents', 'x'])).toString('base64url')}` })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toMatch(/^querystring\/cursor is not a cursor of GET \/namespaces/)
  })
})
