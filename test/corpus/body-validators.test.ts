/**
 * One validator per ingest body: what `validateDocumentsBody`, `validateGraphBody` and
 * `validateEpisodesBody` say of a body (the CLI and the demo loader call them) is what the route answers:
 * the same 400 message, naming the field and the value, or both accept it.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { validateDocumentsBody } from '../../src/corpus/documents-body.js'
import { validateEpisodesBody } from '../../src/corpus/episodes/validation.js'
import { validateGraphBody } from '../../src/corpus/graph.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
}, 120_000)
afterAll(async () => t?.close())

type Row = [label: string, url: string, body: unknown, problem: string | undefined]
// A fresh app: nothing is stored, so the graph and episode checks run against an empty namespace.
const validators: Record<string, (body: unknown) => string[]> = {
  '/ingest/documents': validateDocumentsBody,
  '/ingest/graph': (body) => validateGraphBody(body, new Set()),
  '/ingest/episodes': (body) => validateEpisodesBody(body)
}

// a file written by iconv -t GBK (test/fixtures/files/make.sh), decoded as if it were UTF-8
const GBK_AS_UTF8 = readFileSync(join(import.meta.dirname, '../fixtures/files/notes-gbk.txt')).toString('utf8')
const episode = { id: 'E1', name: '流式返回改造', summary: '只动响应层' }
const rows: Row[] = [
  ['documents: valid', '/ingest/documents', { documents: [{ id: 'd1', text: '# 标题\n\n正文。' }] }, undefined],
  ['documents: an id with a space', '/ingest/documents', { documents: [{ id: 'd 1', text: '正文' }] },
    'body/documents/0/id must match pattern "^[^#\\s/][^#\\s]*$" (got "d 1")'],
  ['documents: no text', '/ingest/documents', { documents: [{ id: 'd1' }] }, "body/documents/0 must have required property 'text'"],
  ['documents: an id twice', '/ingest/documents', { documents: [{ id: 'd1', text: 'a' }, { id: 'd1', text: 'b' }] },
    'documents[1].id: "d1" appears twice in this request'],
  ['documents: a blank text', '/ingest/documents', { documents: [{ id: 'd1', text: '  ' }] }, 'documents[0].text (id "d1"): is blank'],
  ['documents: C0 control characters are normalised away, not junk', '/ingest/documents',
    { documents: [{ id: 'ok', text: '正文。' }, { id: 'x', text: `${'文'.repeat(20)}\u0001\u0002\u001a` }] }, undefined],
  ['documents: text of C1 control characters past 0.5%', '/ingest/documents',
    { documents: [{ id: 'ok', text: '正文。' }, { id: 'x', text: `${'文'.repeat(97)}\u0081\u0082\u0083` }] },
    'documents[1].text (id "x"): 3 of its 100 characters (3%) are replacement or control characters, over the 0.5% allowed ' +
    '(MAX_JUNK_SHARE): binary data, or text read in the wrong encoding'],
  ['documents: GBK bytes sent as UTF-8', '/ingest/documents', { documents: [{ id: 'gbk', text: GBK_AS_UTF8 }] },
    `documents[0].text (id "gbk"): ${[...GBK_AS_UTF8].filter((c) => c === '\uFFFD').length} of its ${[...GBK_AS_UTF8].length} characters ` +
    `(${Math.round(1000 * [...GBK_AS_UTF8].filter((c) => c === '\uFFFD').length / [...GBK_AS_UTF8].length) / 10}%) are replacement or control ` +
    'characters, over the 0.5% allowed (MAX_JUNK_SHARE): binary data, or text read in the wrong encoding'],
  ['documents: a metadata value of no allowed form', '/ingest/documents', { documents: [{ id: 'd1', text: 'a', metadata: { k: { a: 1 } } }] },
    'body/documents/0/metadata/k must be one of these forms: A string, a number, a boolean or a list of strings. (got {"a":1})'],
  ['graph: valid', '/ingest/graph', { entities: [{ id: 'a', name: 'A' }, { id: 'b', name: 'B' }], relations: [{ source: 'a', target: 'b', type: 'x' }] }, undefined],
  ['graph: a blank name', '/ingest/graph', { entities: [{ id: 'a', name: ' ' }] }, 'entities[0].name: must not be empty (got " ")'],
  ['graph: a negative weight', '/ingest/graph', { entities: [{ id: 'a', name: 'A' }], relations: [{ source: 'a', target: 'a', type: 'x', weight: -2 }] },
    'body/relations/0/weight must be >= 0 (got -2)'],
  ['graph: an endpoint neither in the body nor stored', '/ingest/graph', { entities: [{ id: 'a', name: 'A' }], relations: [{ source: 'a', target: 'ghost', type: 'x' }] },
    'relations[0].target: unknown entity "ghost"'],
  ['episodes: valid', '/ingest/episodes', { episodes: [episode] }, undefined],
  ['episodes: a facet given as a string id', '/ingest/episodes', { episodes: [{ ...episode, facets: ['F1'] }] },
    'body/episodes/0/facets/0 must be object (got "F1")'],
  ['episodes: a blank summary', '/ingest/episodes', { episodes: [{ ...episode, summary: '' }] }, 'episodes[0].summary: must not be empty (got "")'],
  ['episodes: an unknown entity', '/ingest/episodes', { episodes: [{ ...episode, entities: ['N9'] }] }, 'episodes[0].entities[0]: unknown entity "N9"'],
  ['episodes: a time that does not parse', '/ingest/episodes',
    { episodes: [{ ...episode, mentioned_time_start: 'last week', mentioned_time_end: '2025-01-01' }] },
    'episodes[0].mentioned_time_start: must be an ISO 8601 time (got "last week")']
]

describe('the ingest validators and the routes agree', () => {
  it.each(rows)('%s', async (_label, url, body, problem) => {
    const problems = validators[url]!(structuredClone(body))
    const r = await t.app.inject({ method: 'POST', url, payload: body as object })
    if (problem === undefined) {
      expect(problems).toEqual([])
      expect(r.statusCode, r.body).toBe(200)
      return
    }
    expect(problems).toEqual([problem])
    expect(r.statusCode, r.body).toBe(400)
    expect(r.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', message: problem })
  })
})
