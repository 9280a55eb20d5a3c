/**
 * Issue 39, real text as it comes. Two cases found in public data, reproduced here with text written for the test:
 *
 * - a stray U+001A in a search-result title (KUAKE-QTR of CBLUE holds 10 such titles in 32,552) refused the title
 *   and its whole batch: it is now removed, counted, and the batch written;
 * - `src/api/index.md` of vuejs-translations/docs-zh-cn (c2715ff) is front matter, a `<script setup>` and a Vue
 *   component, nothing the chunker indexes: it was answered as written and never listed; it is now answered
 *   `skipped` with the reason, and a version held before stays.
 *
 * With the public data at hand (`KUAKE_QTR_DIR`: the folder of `KUAKE-QTR_{train,dev,test}.json`; `VUE_DOCS_DIR`:
 * the `src` folder of docs-zh-cn at c2715ff), the same is checked on it; without, those tests are skipped, saying so.
 */
import { existsSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { prepareDocuments } from '../../src/corpus/documents-body.js'

const QTR = process.env.KUAKE_QTR_DIR
const VUE = process.env.VUE_DOCS_DIR
const hasQtr = QTR !== undefined && existsSync(join(QTR, 'KUAKE-QTR_train.json'))
const hasVue = VUE !== undefined && existsSync(join(VUE, 'api/index.md'))
if (!hasQtr) console.warn('issue-39: KUAKE_QTR_DIR not set to the KUAKE-QTR files: the test over the 32,552 real titles is skipped')
if (!hasVue) console.warn('issue-39: VUE_DOCS_DIR not set to docs-zh-cn/src at c2715ff: the test over the 81 real files is skipped')

/** A page as docs-zh-cn's `src/api/index.md` is: front matter, a script block, a component, no prose. */
const COMPONENT_ONLY = '---\ntitle: API 参考\nsidebar: false\npage: true\nfooter: false\n---\n\n<script setup>\nimport ApiIndex from \'./ApiIndex.vue\'\n</script>\n\n<ApiIndex />\n'

let t: TestApp
beforeAll(async () => { t = await buildTestApp() }, 300_000)
afterAll(async () => t?.close())

const post = (payload: object) => t.app.inject({ method: 'POST', url: '/ingest/documents', payload })
const listed = async (namespace: string) => (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json() as
  { documents: Array<{ id: string; title?: string; chunks: number }>; total: number }

describe('issue 39', () => {
  it('a batch holding a title with U+001A is written whole; the title normalised and counted in its metadata', async () => {
    const titles = ['10个月宝宝一般睡多少个小时', '淋巴结肿大患者全胸片检查\u001a 问题：已经行ct检查', '宝宝十个月没长牙怎么办', '脖子黑就是搓不掉\u001a应该怎么办']
    const r = await post({ namespace: 'titles', documents: titles.map((text, i) => ({ id: `t${i}`, text })) })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json()).toMatchObject({ documents: 4, normalised: [{ id: 't1', chars: 1 }, { id: 't3', chars: 1 }] })
    expect((await listed('titles')).total).toBe(4)
    const hit = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'titles', query: '淋巴结肿大全胸片', top_k: 1 } })
    const item = hit.json().recall_bundle[0]
    expect(item.id).toBe('t1#0')
    expect(item.text).toBe('淋巴结肿大患者全胸片检查 问题：已经行ct检查')
    expect(item.metadata.doc_metadata).toEqual({ normalised_chars: 1 })
  }, 120_000)

  it('a document that gives no text is answered skipped with its reason, every document answered written is listed', async () => {
    const r = await post({
      namespace: 'vue', documents: [
        { id: 'api-index', source: 'api/index.md', text: COMPONENT_ONLY },
        { id: 'api-application', source: 'api/application.md', text: '# 应用实例 API\n\n## createApp()\n\n创建一个应用实例。' }
      ]
    })
    expect(r.statusCode, r.body).toBe(200)
    const answer = r.json()
    expect(answer.documents).toBe(1)
    expect(answer.skipped).toEqual([{ id: 'api-index', reason: expect.stringMatching(/^no text to index: it holds only front matter, or blocks without prose/) }])
    expect((await listed('vue')).documents.map((d) => d.id)).toEqual(['api-application'])
  }, 120_000)

  it('a document held before and sent again without text is skipped, and the version held stays', async () => {
    expect((await post({ namespace: 'kept', documents: [{ id: 'page', text: '# 页面\n\n有正文的版本。' }] })).statusCode).toBe(200)
    const again = await post({ namespace: 'kept', documents: [{ id: 'page', text: COMPONENT_ONLY }] })
    expect(again.json()).toMatchObject({ documents: 0, skipped: [{ id: 'page' }] })
    expect((await listed('kept')).documents).toEqual([expect.objectContaining({ id: 'page', title: '页面', chunks: 1 })])
  }, 120_000)

  it.skipIf(!hasQtr)('the 32,552 KUAKE-QTR titles: only the one empty title refused, the 10 holding U+001A normalised; a body of 1,000 holding one is written', async () => {
    const titles: string[] = []
    for (const split of ['train', 'dev', 'test']) {
      titles.push(...(JSON.parse(await readFile(join(QTR!, `KUAKE-QTR_${split}.json`), 'utf8')) as Array<{ title: string }>).map((r) => r.title))
    }
    expect(titles.length).toBe(32_552)
    const normalised: Array<{ at: number; chars: number }> = []
    const refused: Array<{ at: number; reason: string }> = []
    for (let from = 0; from < titles.length; from += 1000) {
      const documents = titles.slice(from, from + 1000).map((text, i) => ({ id: `q${from + i}`, text }))
      // the route's own check of a body, each document judged alone
      const prepared = prepareDocuments({ documents, on_invalid: 'skip' })
      refused.push(...prepared.refused.map((r) => ({ at: from + r.index, reason: r.reason })))
      normalised.push(...prepared.normalised.map((n) => ({ at: Number(n.id.slice(1)), chars: n.chars })))
    }
    // one title of the set is the empty string: not a document
    expect(refused).toEqual([{ at: titles.indexOf(''), reason: `body/documents/${titles.indexOf('') % 1000}/text must NOT have fewer than 1 characters (got "")` }])
    expect(normalised.map((n) => n.at)).toEqual(titles.flatMap((t, i) => (t.includes('\u001a') ? [i] : [])))
    expect(normalised.length).toBe(10)
    expect(normalised.reduce((n, x) => n + x.chars, 0)).toBe(titles.join('').split('\u001a').length - 1)
    // the body of 1,000 that holds the first of them goes in whole, as all or nothing
    const from = Math.floor(normalised[0]!.at / 1000) * 1000
    const documents = titles.slice(from, from + 1000).map((text, i) => ({ id: `q${from + i}`, text })).filter((d) => d.text !== '')
    const r = await post({ namespace: 'qtr', documents })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().documents).toBe(documents.length)
    expect((await listed('qtr')).total).toBe(documents.length)
  }, 900_000)

  it.skipIf(!hasVue)('the 81 Markdown files of docs-zh-cn guide + api in two requests: 80 listed, api/index.md answered skipped', async () => {
    const walk = async (dir: string): Promise<string[]> => (await Promise.all((await readdir(dir, { withFileTypes: true })).map((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.md') ? [join(dir, e.name)] : [])))).flat()
    const files = [...await walk(join(VUE!, 'guide')), ...await walk(join(VUE!, 'api'))].sort()
    expect(files.length).toBe(81)
    const documents = await Promise.all(files.map(async (f) => {
      const source = relative(VUE!, f)
      return { id: source.replace(/\.md$/, '').split('/').join('-'), source, text: await readFile(f, 'utf8') }
    }))
    const answers = []
    for (const part of [documents.slice(0, 40), documents.slice(40)]) {
      const r = await post({ namespace: 'vue-real', documents: part })
      expect(r.statusCode, r.body).toBe(200)
      answers.push(r.json())
    }
    const written = answers.reduce((n, a) => n + a.documents, 0)
    const skipped = answers.flatMap((a) => a.skipped ?? [])
    expect(skipped.map((s: { id: string }) => s.id)).toEqual(['api-index'])
    expect(written).toBe(80)
    const list = await listed('vue-real')
    expect(list.total).toBe(80)
    expect(list.documents.map((d) => d.id).sort()).toEqual(documents.map((d) => d.id).filter((id) => id !== 'api-index').sort())
  }, 1_800_000)
})
