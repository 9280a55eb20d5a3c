/**
 * The fourth path: `include_images` on `/retrieve` (hybrid) answers `image_items` beside the recall bundle, and
 * `GET /images/{id}` serves the bytes. The pictures are real files (test/fixtures/images/make.sh); which picture a
 * question names comes from the captions make.sh wrote, and the bytes served are compared with the files'.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { readDocumentFile } from '../../../src/corpus/files.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { QDRANT_SKIP_LINE } from '../../helpers/qdrant-server.js'

const FILES = join(import.meta.dirname, '../../fixtures/images')
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

async function document(name: string) {
  const read = await readDocumentFile(join(FILES, name), FILES)
  if (read.outcome !== 'read') throw new Error(`${name}: ${read.reason}`)
  return read.document
}

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`images (qdrant): ${QDRANT_SKIP_LINE}`)

const backends = [
  { name: 'embedded', skip: false, env: (): Record<string, string> => ({}) },
  {
    name: 'qdrant', skip: !qdrantUrl,
    env: (): Record<string, string> => ({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `img_${randomBytes(3).toString('hex')}_`, VECTOR_TIMEOUT_MS: '30000' })
  }
]

for (const { name, skip, env } of backends) describe.skipIf(skip)(`image_items and GET /images/{id} (${name})`, () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp(env())
    const photo = (await readFile(join(FILES, 'photo.jpg'))).toString('base64')
    const res = await t.app.inject({
      method: 'POST', url: '/ingest/documents', payload: {
        namespace: 'figs', documents: [
          await document('guide.md'),
          { id: 'trip', text: '# 旅行\n\n山间的晚霞照片，拍于秋天。', images: [{ data: photo, caption: '图 1：山间晚霞' }] },
          { id: 'plain', text: '# 值班\n\n夜间告警由二线值班处理。' }
        ]
      }
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().images).toMatchObject({ written: 3, small: 1 })
  }, 180_000)
  afterAll(async () => t?.close())

  const retrieve = (query: string, extra: Record<string, unknown> = {}) =>
    t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query, namespace: 'figs', top_k: 3, ...extra } })

  it('without include_images the answer has no image_items', async () => {
    const res = await retrieve('深色模式在哪里打开')
    expect(res.statusCode).toBe(200)
    expect(res.json()).not.toHaveProperty('image_items')
    expect(res.json().legs.map((l: { name: string }) => l.name)).not.toContain('images')
  })

  it('with it, the screenshot whose caption names dark mode comes first, apart from the passages, and its url serves the file', async () => {
    const res = await retrieve('深色模式在哪里打开', { include_images: true })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.recall_bundle.every((i: { id: string }) => !i.id.includes('#img-'))).toBe(true)
    const [first] = body.image_items
    expect(first).toMatchObject({ document: 'guide', caption: '图 1：显示设置，深色模式已打开' })
    expect(first.id).toBe(`guide#img-${sha(await readFile(join(FILES, 'settings.png'))).slice(0, 16)}`)
    const scores = body.image_items.map((i: { score: number }) => i.score)
    expect(scores).toEqual([...scores].sort((a, b) => b - a))
    const served = await t.app.inject({ method: 'GET', url: first.url })
    expect(served.statusCode).toBe(200)
    expect(served.headers['content-type']).toBe('image/png')
    expect(sha(served.rawPayload)).toBe(sha(await readFile(join(FILES, 'settings.png'))))
  })

  it('the diagram named in a caption answers a question about the request path; GET /retrieve takes include_images too', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&namespace=figs&top_k=3&include_images=true&q=${encodeURIComponent('请求经过哪些组件到达向量库')}` })
    expect(res.statusCode).toBe(200)
    expect(res.json().image_items[0]).toMatchObject({ document: 'guide', caption: '图 2：请求经网关到检索器再到向量库' })
  })

  it('a filter on documents keeps their pictures only', async () => {
    const res = await retrieve('深色模式在哪里打开', { include_images: true, filter: { doc_ids: ['trip'] } })
    expect(res.json().image_items.map((i: { document: string }) => i.document)).toEqual(['trip'])
  })

  it('a picture over IMAGE_MAX_STORED_BYTES is served as a WebP thumbnail within it', async () => {
    const res = await retrieve('山间晚霞的照片', { include_images: true })
    const photo = res.json().image_items.find((i: { document: string }) => i.document === 'trip')
    const served = await t.app.inject({ method: 'GET', url: photo.url })
    expect(served.headers['content-type']).toBe('image/webp')
    expect(served.rawPayload.length).toBeLessThanOrEqual(t.config.images.maxStoredBytes)
    expect((await readFile(join(FILES, 'photo.jpg'))).length).toBeGreaterThan(t.config.images.maxStoredBytes)
  })

  it('/context with include_images answers the same image_items beside its packed passages; without, none', async () => {
    const body = { mode: 'hybrid', query: '深色模式在哪里打开', namespace: 'figs', top_k: 3, max_tokens: 400 }
    const withImages = await t.app.inject({ method: 'POST', url: '/context', payload: { ...body, include_images: true } })
    expect(withImages.statusCode, withImages.body).toBe(200)
    expect(withImages.json().image_items[0]).toMatchObject({ document: 'guide', caption: '图 1：显示设置，深色模式已打开' })
    expect(withImages.json().context).not.toContain('base64')
    const without = await t.app.inject({ method: 'POST', url: '/context', payload: body })
    expect(without.json()).not.toHaveProperty('image_items')
  })

  it('an id the namespace does not hold is a 404; so is one of another namespace', async () => {
    const missing = await t.app.inject({ method: 'GET', url: `/images/${encodeURIComponent('guide#img-0000000000000000')}?namespace=figs` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('RECALL_NOT_FOUND')
    const res = await retrieve('深色模式在哪里打开', { include_images: true })
    const other = await t.app.inject({ method: 'GET', url: res.json().image_items[0].url.replace('namespace=figs', 'namespace=default') })
    expect(other.statusCode).toBe(404)
  })
})
