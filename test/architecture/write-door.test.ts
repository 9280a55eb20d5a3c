/**
 * Writes are possible only through the write path, by type: what the runtime hands the routes is a read view of the
 * documents (src/corpus/document-views.ts), so a route that tries to ingest, delete or drop through it does not
 * compile; nor does a write through the library behind the view, whose writers sit under the write path's appliers
 * (src/corpus/appliers/writers/documents.ts). The fixture (test/fixtures/write-door/, outside the project's compilation)
 * is compiled here with the project's compiler options; the reads in it compile, each write is an error on its own line.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { DocumentLibraryView } from '../../src/corpus/document-views.js'
import type { DocumentLibrary } from '../../src/corpus/documents/library.js'
import type { ingestDocuments } from '../../src/corpus/appliers/writers/documents.js'
import type { RuntimeCorpus } from '../../src/runtime.js'

const FIXTURE = resolve('test/fixtures/write-door/route-writes-through-a-view.ts')

/** The fixture's type errors, as `line: TScode message`. */
function fixtureErrors(): string[] {
  const config = ts.readConfigFile(resolve('tsconfig.json'), (path) => ts.sys.readFile(path))
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, resolve('.'))
  const program = ts.createProgram([FIXTURE], { ...options, noEmit: true })
  const source = program.getSourceFile(FIXTURE)!
  return ts.getPreEmitDiagnostics(program, source).map((d) => {
    const line = d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0
    return `${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`
  })
}

describe('a route cannot write through the read view', () => {
  it('the fixture route compiles its reads and fails on each write', () => {
    const lines = readFileSync(FIXTURE, 'utf8').split('\n')
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1
    expect(fixtureErrors()).toEqual([
      `${lineOf('library?.ingest(')}: TS2339 Property 'ingest' does not exist on type 'DocumentLibraryView'.`,
      `${lineOf('library?.delete(')}: TS2339 Property 'delete' does not exist on type 'DocumentLibraryView'.`,
      `${lineOf('library?.drop(')}: TS2339 Property 'drop' does not exist on type 'DocumentLibraryView'.`,
      `${lineOf('library.ingest(')}: TS2339 Property 'ingest' does not exist on type 'DocumentLibrary'.`,
      `${lineOf('library.rebuild(')}: TS2339 Property 'rebuild' does not exist on type 'DocumentLibrary'.`,
      `${lineOf('library.delete(')}: TS2339 Property 'delete' does not exist on type 'DocumentLibrary'.`,
      `${lineOf('library.drop(')}: TS2339 Property 'drop' does not exist on type 'DocumentLibrary'.`,
      `${lineOf('library.refreshDocuments(')}: TS2339 Property 'refreshDocuments' does not exist on type 'DocumentLibrary'.`
    ])
  }, 120_000)

  it('the runtime holds the views; the library behind them only reads, and its writers (under the appliers) take it', () => {
    type View = NonNullable<ReturnType<RuntimeCorpus['documents']['get']>>
    expectTypeOf<View>().toEqualTypeOf<DocumentLibraryView>()
    expectTypeOf<View>().not.toHaveProperty('ingest')
    expectTypeOf<DocumentLibrary>().not.toHaveProperty('ingest')
    expectTypeOf<typeof ingestDocuments>().parameter(0).toEqualTypeOf<DocumentLibrary>()
    // checked by `npm run typecheck`: the line below would compile if a view could write
    const tryWrite = (view: View) =>
      // @ts-expect-error a read view has no ingest
      view.ingest([], { exclusive: (write: never) => write })
    expect(typeof tryWrite).toBe('function')
  })
})
