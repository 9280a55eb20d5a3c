import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadDemoDocuments, loadDemoEpisodes, loadDemoGraph } from '../../src/corpus/demo.js'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { failingWhen } from '../helpers/failing-provider.js'

// The /demo page in a real browser: Debian's chromium driven by playwright-core (scripts/setup.sh installs it;
// playwright never downloads a browser here). Screenshots are kept under .cache/ as artefacts.
const CHROMIUM = '/usr/bin/chromium'
const SHOTS = '.cache'
const QUESTION = '左氧氟沙星能给孩子用吗'

type Item = { id: string; source: string; metadata: { source_chunk_ids?: string[] } }
type Compare = {
  arms: { mode: string; response?: { recall_bundle: Item[]; match_strength: string }; error?: { statusCode: number; message: string } }[]
  comparison: { common_evidence: string[]; evidence_rbo: number | null; sources_jaccard: number | null }[]
}

let t: TestApp
let url: string
let userDataDir: string
let browser: BrowserContext
let page: Page
let failGraph = false

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (apt-get install chromium)`)
  // ENTITY_VECTORS: the demo graph's names get their vectors, so that a question may reach an entity by meaning
  t = await buildTestApp({ ENTITY_VECTORS: 'true' }, (p) => ({
    ...p,
    graph: failingWhen(p.graph, () => failGraph, () => new BackendUnavailableError('neo4j', 'connection refused'))
  }))
  await loadDemoGraph(t.app.services)
  await loadDemoEpisodes(t.app.services)
  await loadDemoDocuments(t.app.services, () => {})
  await t.app.services.writePath.entityNamesIdle()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  userDataDir = await mkdtemp(join(tmpdir(), 'recall-chromium-'))
  await mkdir(SHOTS, { recursive: true })
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    // Without the background-networking flags chromium keeps dialling out, and this machine has no network.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 }
  })
  page = await browser.newPage()
})

afterAll(async () => {
  await browser?.close()
  await t?.close()
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true })
})

/** What the service answers for the request the page sent (the page keeps it in its URL's hash). */
async function sameRequestByApi(): Promise<{ request: Record<string, unknown>; answer: Compare }> {
  const request = JSON.parse(decodeURIComponent(new URL(page.url()).hash.slice(1))) as Record<string, unknown>
  const r = await t.app.inject({ method: 'POST', url: '/retrieve/compare', payload: request })
  return { request, answer: r.json() as Compare }
}

const columnIds = (i: number) => page.locator(`#column-${i} article.item`).evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))

describe('/demo in chromium', () => {
  it('types a Chinese question, compares hybrid with graphrag and shows what /retrieve/compare answers', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('')
    await page.locator('#question').pressSequentially(QUESTION)
    await page.selectOption('#arm0-mode', 'hybrid')
    await page.selectOption('#arm1-mode', 'graphrag')
    await page.locator('#question').press('Enter')
    await page.waitForSelector('body[data-state=done]')
    await page.waitForSelector('#column-0 .column-head')
    await page.waitForSelector('#column-1 .column-head')

    const { request, answer } = await sameRequestByApi()
    expect(request).toMatchObject({ query: QUESTION, arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] })
    expect(answer.arms.map((a) => a.mode)).toEqual(['hybrid', 'graphrag'])
    for (const i of [0, 1]) {
      const bundle = answer.arms[i]!.response!.recall_bundle
      expect(bundle.length).toBeGreaterThan(0)
      expect(await columnIds(i)).toEqual(bundle.map((item) => item.id))
      expect(await page.locator(`#column-${i} [data-figure=match_strength]`).textContent()).toBe(answer.arms[i]!.response!.match_strength)
      const sources = await page.locator(`#column-${i} article.item .source`).allTextContents()
      expect(sources).toEqual(bundle.map((item) => item.source))
    }
    // The graph names 左氧氟沙星 and cites the antibiotics chunks hybrid finds: shared evidence, highlighted.
    const pair = answer.comparison[0]!
    expect(pair.common_evidence.length).toBeGreaterThan(0)
    expect(await page.locator('[data-figure=common_evidence]').textContent()).toBe(pair.common_evidence.join(', '))
    expect(await page.locator('[data-figure=evidence_rbo]').textContent()).toBe(String(Math.round(pair.evidence_rbo! * 1000) / 1000))
    const highlighted = await page.locator('#column-0 article.item.common-evidence').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))
    expect(highlighted).toEqual(answer.arms[0]!.response!.recall_bundle.map((i) => i.id).filter((id) => pair.common_evidence.includes(id)))
    // The readable metadata: per-leg ranks and each leg's contribution (RRF or convex) for hybrid, the relation for graphrag.
    expect(await page.locator('#column-0 article.item').first().locator('.why-item table').textContent()).toMatch(/vector.*rank \d+.*(RRF|convex) \+\d\.\d+/)
    expect(await page.locator('#column-1 article.item').first().locator('.why-item').textContent()).toContain('左氧氟沙星 -[禁忌]->')

    await page.screenshot({ path: `${SHOTS}/demo-desktop.png`, fullPage: true })
    // Phone width: nothing wider than the screen; the form, then the answers one under the other.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.evaluate('window.scrollTo(0, 0)')
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390)
    await page.screenshot({ path: `${SHOTS}/demo-phone.png` })
    await page.locator('#column-0').scrollIntoViewIfNeeded()
    await page.screenshot({ path: `${SHOTS}/demo-phone-answers.png` })
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it('compares two hybrid arms that differ in legs, from the keyboard', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('咳嗽三周以上要做什么检查')
    await page.selectOption('#arm1-mode', 'hybrid')
    await page.locator('#arm1-vector').uncheck()
    await page.locator('#question').focus()
    await page.keyboard.press('Enter')
    await page.waitForSelector('body[data-state=done]')
    const { request, answer } = await sameRequestByApi()
    expect(request.arms).toEqual([{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }])
    expect(await columnIds(1)).toEqual(answer.arms[1]!.response!.recall_bundle.map((i) => i.id))
    expect(await page.locator('#column-1 .column-head').textContent()).toContain('legs lexical')
  })

  it('with pictures ticked, a hybrid arm shows the demo diagram (demo/pictures) with its caption and score above its passages', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('llm-proxy 依赖哪些服务')
    await page.selectOption('#arm0-mode', 'hybrid')
    await page.selectOption('#arm1-mode', 'graphrag')
    await page.locator('#include-images').check()
    await page.locator('#question').press('Enter')
    await page.waitForSelector('body[data-state=done]')
    const { request, answer } = await sameRequestByApi()
    // only the hybrid arm asks for pictures: graphrag does not take the option
    expect(request.arms).toEqual([{ mode: 'hybrid', include_images: true }, { mode: 'graphrag' }])
    type Picture = { id: string; score: number; caption: string; url: string }
    const pictures = (answer.arms[0]!.response as unknown as { image_items: Picture[] }).image_items
    // the demo world holds one picture, the diagram in engineering/llm-proxy.md with the caption written under it
    expect(pictures.map((p) => p.caption)).toEqual(['图 1：llm-proxy 的依赖关系图'])
    const figure = page.locator('#column-0 .pictures figure.picture')
    expect(await figure.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(pictures.map((p) => p.id))
    expect(await figure.locator('.caption').textContent()).toBe('图 1：llm-proxy 的依赖关系图')
    expect(await figure.locator('.score').textContent()).toBe(`score ${Math.round(pictures[0]!.score * 1e4) / 1e4}`)
    // the thumbnail is the picture GET /images/{id} serves: drawn at the size demo/pictures/make.sh gave it
    const img = figure.locator('img')
    await img.evaluate((el: { decode(): Promise<void> }) => el.decode())
    expect(await img.evaluate((el: { naturalWidth: number; naturalHeight: number }) => [el.naturalWidth, el.naturalHeight])).toEqual([900, 420])
    expect(await img.getAttribute('src')).toBe(pictures[0]!.url)
    // the pictures stand above the passages, in the hybrid column only
    expect(await page.locator('#column-0 .pictures + article.item').count()).toBe(1)
    expect(await page.locator('#column-1 .pictures').count()).toBe(0)
    await page.screenshot({ path: `${SHOTS}/demo-pictures.png`, fullPage: true })

    // unticked, the same question answers no pictures
    await page.locator('#include-images').uncheck()
    await page.evaluate('document.body.dataset.state = ""')
    await page.locator('#question').press('Enter')
    await page.waitForSelector('body[data-state=done]')
    expect((await sameRequestByApi()).request.arms).toEqual([{ mode: 'hybrid' }, { mode: 'graphrag' }])
    expect(await page.locator('.pictures').count()).toBe(0)
  })

  it('adds the graph leg from its toggle and shows each item\'s entity paths', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('智能分诊服务依赖什么')
    await page.selectOption('#arm1-mode', 'hybrid')
    expect(await page.locator('#arm1-graph').isChecked()).toBe(false)
    await page.locator('#arm1-graph').check()
    await page.locator('#question').focus()
    await page.keyboard.press('Enter')
    await page.waitForSelector('body[data-state=done]')
    const { request, answer } = await sameRequestByApi()
    expect(request.arms).toEqual([{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['vector', 'lexical', 'graph'] }])
    const graphed = answer.arms[1]!.response!.recall_bundle.filter((i) => (i.metadata as { graph_paths?: unknown[] }).graph_paths)
    expect(graphed.length).toBeGreaterThan(0)
    // the first item the graph reached lists its paths: the entity, and for a neighbour the relation and hop
    const first = graphed[0]!
    const paths = (first.metadata as { graph_paths: Array<{ entity_name: string }> }).graph_paths
    const card = page.locator(`#column-1 article.item[data-id="${first.id}"] .graph-paths`)
    expect(await card.textContent()).toContain(paths[0]!.entity_name)
    expect(await page.locator('#column-0 .graph-paths').count()).toBe(0)
  })

  it('says in words that an entity was reached by meaning, with its similarity, in graphrag and in the graph leg\'s paths', async () => {
    // 血糖太低 names no entity of the demo graph: 低血糖 (e-hypoglycemia) is reached by its name's vector alone
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('血糖太低的时候病人该吃什么')
    await page.selectOption('#arm0-mode', 'graphrag')
    await page.selectOption('#arm1-mode', 'hybrid')
    await page.locator('#arm1-graph').check()
    await page.locator('#question').focus()
    await page.keyboard.press('Enter')
    await page.waitForSelector('body[data-state=done]')
    const { answer } = await sameRequestByApi()
    type Meaning = { matched_by?: string; similarity?: number; hop?: number; graph_paths?: Array<{ entity_name: string; matched_by: string; similarity?: number; hop: number }> }
    const entity = answer.arms[0]!.response!.recall_bundle.find((i) => i.id === 'e-hypoglycemia')
    expect(entity, JSON.stringify(answer.arms[0])).toBeDefined()
    const m = entity!.metadata as Meaning
    expect(m).toMatchObject({ matched_by: 'meaning', hop: 0 })
    const rounded = String(Math.round(m.similarity! * 1000) / 1000)
    const why = await page.locator('#column-0 article.item[data-id="e-hypoglycemia"] .why-item').textContent()
    expect(why).toContain('Named: by meaning, near "低血糖"')
    expect(why).toContain(`(similarity ${rounded})`)

    const byMeaning = answer.arms[1]!.response!.recall_bundle.find((i) => (i.metadata as Meaning).graph_paths?.some((p) => p.hop === 0 && p.matched_by === 'meaning'))
    expect(byMeaning, JSON.stringify(answer.arms[1])).toBeDefined()
    const path = (byMeaning!.metadata as Meaning).graph_paths!.find((p) => p.hop === 0 && p.matched_by === 'meaning')!
    const paths = await page.locator(`#column-1 article.item[data-id="${byMeaning!.id}"] .graph-paths`).textContent()
    expect(paths).toContain(`${path.entity_name} (by meaning, similarity ${String(Math.round(path.similarity! * 1000) / 1000)})`)
    await page.screenshot({ path: `${SHOTS}/demo-meaning.png`, fullPage: true })
  })

  it('offers each fusion\'s own knobs and sends only the chosen one\'s', async () => {
    await page.goto(`${url}/demo`)
    // The default fusion is described, and no knob of either fusion is offered until one is chosen.
    expect(await page.locator('#arm0-mode').inputValue()).toBe('hybrid')
    expect(await page.locator('fieldset[data-arm="0"] .hint').textContent()).toContain('default: convex, min-max, alpha 0.5')
    expect(await page.locator('#arm0-alpha').isVisible()).toBe(false)
    expect(await page.locator('#arm0-rrf_k').isVisible()).toBe(false)

    await page.locator('#question').fill('咳嗽三周以上要做什么检查')
    // A: rrf_k typed under rrf, then convex chosen: the hidden rrf_k must not travel with alpha (the service refuses a mix).
    await page.selectOption('#arm0-fusion', 'rrf')
    expect(await page.locator('#arm0-alpha').isVisible()).toBe(false)
    await page.locator('#arm0-rrf_k').fill('30')
    await page.selectOption('#arm0-fusion', 'convex')
    expect(await page.locator('#arm0-rrf_k').isVisible()).toBe(false)
    await page.locator('#arm0-alpha').fill('0.3')
    await page.selectOption('#arm0-normalisation', 'tmm')
    await page.selectOption('#arm1-mode', 'hybrid')
    await page.selectOption('#arm1-fusion', 'rrf')
    await page.locator('#arm1-rrf_k').fill('30')
    await page.locator('#run').click()
    await page.waitForSelector('body[data-state=done]')

    const { request, answer } = await sameRequestByApi()
    expect(request.arms).toEqual([
      { mode: 'hybrid', fusion: 'convex', alpha: 0.3, normalisation: 'tmm' },
      { mode: 'hybrid', fusion: 'rrf', rrf_k: 30 }
    ])
    for (const i of [0, 1]) expect(await columnIds(i)).toEqual(answer.arms[i]!.response!.recall_bundle.map((item) => item.id))
    expect(await page.locator('#column-0 article.item').first().locator('.why-item').textContent()).toContain('convex (tmm) alpha = 0.3')
    expect(await page.locator('#column-1 article.item').first().locator('.why-item').textContent()).toContain('RRF k = 30')
  })

  it('puts a linked arm\'s fusion options back into their fields', async () => {
    // rrf_k without `fusion` means rrf to the service; the form shows it so, and sends it as such.
    const linked = { query: '咳嗽三周以上要做什么检查', top_k: 5, arms: [{ mode: 'hybrid', alpha: 0.7 }, { mode: 'hybrid', rrf_k: 20 }] }
    await page.goto('about:blank') // a new hash on the same page would not load it again
    await page.goto(`${url}/demo#${encodeURIComponent(JSON.stringify(linked))}`)
    await page.waitForSelector('body[data-state=done]')
    expect(await page.locator('#arm0-fusion').inputValue()).toBe('convex')
    expect(await page.locator('#arm0-alpha').inputValue()).toBe('0.7')
    expect(await page.locator('#arm1-fusion').inputValue()).toBe('rrf')
    expect(await page.locator('#arm1-rrf_k').inputValue()).toBe('20')
    expect(await page.locator('#arm1-extra').inputValue()).toBe('')
    const { request } = await sameRequestByApi()
    expect(request.arms).toEqual([{ mode: 'hybrid', fusion: 'convex', alpha: 0.7 }, { mode: 'hybrid', fusion: 'rrf', rrf_k: 20 }])
  })

  it('runs an example question with one key press', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#examples button').nth(2).focus()
    await page.keyboard.press('Enter')
    await page.waitForSelector('body[data-state=done]')
    expect(await page.locator('#question').inputValue()).toBe('谁负责鉴权中间件')
    expect(await columnIds(0)).toContain('e-auth')
  })

  it('shows a 503 of one mode in its column and keeps the other', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill('谁负责鉴权中间件')
    await page.selectOption('#arm0-mode', 'hybrid')
    await page.selectOption('#arm1-mode', 'graphrag')
    failGraph = true
    try {
      await page.locator('#run').click()
      await page.waitForSelector('body[data-state=done]')
    } finally {
      failGraph = false
    }
    expect(await page.locator('#column-1').getAttribute('data-outcome')).toBe('error')
    const error = await page.locator('#column-1 .error-box').textContent()
    expect(error).toContain('503 Service Unavailable')
    expect(error).toContain('neo4j is unavailable')
    expect(await page.locator('#column-0').getAttribute('data-outcome')).toBe('ok')
    expect((await columnIds(0)).length).toBeGreaterThan(0)
    await page.screenshot({ path: `${SHOTS}/demo-503.png`, fullPage: false })
  })

  it('opens the same request in Swagger UI, ready to execute', async () => {
    await page.goto(`${url}/demo`)
    await page.locator('#question').fill(QUESTION)
    await page.selectOption('#arm1-mode', 'hybrid')
    await page.locator('#arm1-vector').uncheck()
    await page.locator('#run').click()
    await page.waitForSelector('body[data-state=done]')
    const { request } = await sameRequestByApi()
    const href = await page.locator('#swagger-link').getAttribute('href')
    await page.goto(`${url}${href}`)
    const editor = page.locator('#operations-retrieve-post_retrieve_compare textarea.body-param__text')
    await editor.waitFor()
    await expect.poll(async () => JSON.parse(await editor.inputValue())).toEqual(request)
  })

  it('answers from the namespace in its URL in every mode, and from another one picked from the list', async () => {
    // A corpus of the user's own, in a fresh namespace: documents only (graphrag reads the graph derived from them),
    // and one Episode written as JSON (episodic has no Episodes derived from documents yet).
    const namespace = 'library-demo'
    const documents = [
      { id: 'borrow', source: 'library/borrow.md', text: '# 借阅规则\n\n**借阅系统**由**读者服务部**负责维护。每位读者最多借阅 10 册图书，借期 30 天，可续借一次。' },
      { id: 'archive', source: 'library/archive.md', text: '# 古籍阅览室\n\n**古籍阅览室**禁用闪光灯。阅览古籍须提前三天预约，由**特藏部**审批。' }
    ]
    const ingested = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(ingested.statusCode, ingested.body).toBe(200)
    const episodes = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: { namespace, episodes: [
      { id: 'E-borrow-upgrade', name: '借阅系统升级', summary: '借阅系统三月完成升级，续借改为线上办理，读者服务部负责' }
    ] } })
    expect(episodes.statusCode, episodes.body).toBe(200)
    const chunks = new Set([...documents.map((d) => `${d.id}#0`)])

    await page.goto('about:blank')
    await page.goto(`${url}/demo?namespace=${namespace}`)
    await page.waitForSelector('#namespace[data-state=listed]')
    expect(await page.locator('#namespace').inputValue()).toBe(namespace)
    const listed = await page.locator('#namespace option').evaluateAll((els) => els.map((e) => e.getAttribute('value')))
    expect(listed).toEqual(['default', namespace])
    expect(await page.locator('#namespace-holds').textContent()).toBe(`2 documents, ${(await counts(namespace)).entities} entities, 1 Episode`)
    // The demo world's example questions are about `default`: not offered here.
    expect(await page.locator('#examples').isVisible()).toBe(false)

    await page.locator('#question').fill('借阅系统由谁负责维护')
    for (const arms of [['hybrid', 'graphrag'], ['episodic', 'hybrid']] as const) {
      await page.selectOption('#arm0-mode', arms[0])
      await page.selectOption('#arm1-mode', arms[1])
      await page.locator('#run').click()
      await page.waitForSelector('body[data-state=done]')
      const { request, answer } = await sameRequestByApi()
      expect(request).toMatchObject({ namespace, arms: [{ mode: arms[0] }, { mode: arms[1] }] })
      for (const i of [0, 1]) {
        const arm = answer.arms[i]!
        const bundle = arm.response!.recall_bundle
        expect(bundle.length, `${arm.mode} answers from ${namespace}`).toBeGreaterThan(0)
        expect(await columnIds(i)).toEqual(bundle.map((item) => item.id))
        if (arm.mode === 'hybrid') for (const item of bundle) expect(chunks).toContain(item.id)
        if (arm.mode === 'graphrag') {
          expect(bundle[0]!.metadata.source_chunk_ids).toContain('borrow#0')
          for (const item of bundle) for (const id of item.metadata.source_chunk_ids ?? []) expect(chunks).toContain(id)
        }
        if (arm.mode === 'episodic') expect(bundle.map((item) => item.id)).toEqual(['E-borrow-upgrade'])
      }
    }
    expect(new URL(page.url()).searchParams.get('namespace')).toBe(namespace)
    await page.screenshot({ path: `${SHOTS}/demo-namespace.png`, fullPage: true })

    // Picking `default` asks the same question of the demo world at once, and the URL follows.
    await page.evaluate('document.body.dataset.state = ""')
    await page.selectOption('#namespace', 'default')
    await page.waitForSelector('body[data-state=done]')
    const { request, answer } = await sameRequestByApi()
    expect(request).toMatchObject({ namespace: 'default', query: '借阅系统由谁负责维护' })
    expect(new URL(page.url()).searchParams.get('namespace')).toBeNull()
    expect(await page.locator('#examples').isVisible()).toBe(true)
    for (const i of [0, 1]) {
      const ids = answer.arms[i]!.response!.recall_bundle.map((item) => item.id)
      expect(await columnIds(i)).toEqual(ids)
      for (const id of ids) expect(chunks).not.toContain(id)
    }
  })
})

async function counts(namespace: string): Promise<{ entities: number }> {
  const r = await t.app.inject({ method: 'GET', url: '/namespaces' })
  return (r.json() as { namespaces: Array<{ namespace: string; entities: number }> }).namespaces.find((n) => n.namespace === namespace)!
}
