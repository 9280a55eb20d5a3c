/**
 * Reference data the repository does not ship (the CMRC set, Qdrant's OpenAPI document, the Qdrant server) is
 * located in one module, bench/lib/reference-data.ts, which the tests reach through test/helpers/reference-data.ts:
 * a missing file skips its suites with one line, and fails the run under CI. No other test source names a path
 * into `../shared` in a string, so a clone with nothing beside it runs (issue 28).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/** The test sources allowed to name the reference folder (the helper itself). */
const HELPER_FILES = new Set(['test/helpers/reference-data.ts'])
const SHARED_PATH = /\.\.\/shared(\/|$)|(^|[^\w-])shared\/(data|qdrant)(\/|$)/

/** Each string or template-literal piece of `source` that names a path into the reference folder, as `file:line: text`. */
function sharedPathLiterals(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) && SHARED_PATH.test(node.text)) {
      const line = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1
      found.push(`${file}:${line}: ${node.text}`)
    }
    ts.forEachChild(node, visit)
  }
  visit(tree)
  return found
}

function testSources(): string[] {
  return readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join('test', f).split('\\').join('/'))
    .sort()
}

describe('reference data is read through its one helper', () => {
  it('no test source but the helper names a path into the reference folder', () => {
    const sources = testSources()
    expect(sources.length).toBeGreaterThan(100)
    const offending = sources.filter((f) => !HELPER_FILES.has(f)).flatMap((f) => sharedPathLiterals(f, readFileSync(f, 'utf8')))
    expect(offending).toEqual([])
  })

  it('the check finds such paths in strings and templates, not in comments or other words', () => {
    const fixture = 'test/fixtures/reference-data/names-shared-paths.txt'
    // the texts themselves would name the folder here: their line numbers say which were found
    expect(sharedPathLiterals('x.ts', readFileSync(fixture, 'utf8')).map((found) => found.split(':')[1])).toEqual(['3', '4', '5'])
  })
})
