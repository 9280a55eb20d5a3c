/**
 * The import rules of `.dependency-cruiser.cjs` hold over src/ and adapters/, with no exceptions: no cycles,
 * providers below modes, adapters through ports and the kernel only, modes independent of each other, the HTTP layer
 * given the runtime and never the services.
 */
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

interface Violation { rule: { name: string }; from: string; to: string; cycle?: Array<{ name: string }> }

function cruise(paths: string[], cwd = '.'): { violations: Violation[]; modules: number } {
  const bin = resolve('node_modules/.bin/depcruise')
  const out = execFileSync(bin, ['-c', '.dependency-cruiser.cjs', '--output-type', 'json', ...paths], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 })
  const result = JSON.parse(out) as { summary: { violations: Violation[]; totalCruised: number } }
  return { violations: result.summary.violations, modules: result.summary.totalCruised }
}

describe('import rules', () => {
  it('src/ and adapters/ follow every rule', () => {
    const { violations, modules } = cruise(['src', 'adapters'])
    expect(modules).toBeGreaterThan(100)
    expect(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`)).toEqual([])
  }, 120_000)

  it('the rules catch what they forbid (a fixture tree that breaks each one)', () => {
    const { violations } = cruise(['src', 'adapters'], 'test/fixtures/import-rules')
    expect([...new Set(violations.map((v) => v.rule.name))].sort()).toEqual([
      'adapters-do-not-import-each-other', 'adapters-import-ports-and-kernel-only', 'appliers-only-through-the-write-path', 'catch-up-through-the-shared-catalog',
      'http-is-given-the-runtime', 'http-on-top', 'kernel-imports-nothing-of-ours', 
      'no-circular', 'providers-below-modes', 'reader-state-for-the-reader-and-its-writers'
    ])
  }, 120_000)

  it('an applier or a writer under it is imported by the write path and the appliers alone: the fixture route and corpus modules that import one break the rule, its write path and applier do not', () => {
    const { violations } = cruise(['src', 'adapters'], 'test/fixtures/import-rules')
    expect(violations.filter((v) => v.rule.name === 'appliers-only-through-the-write-path').map((v) => `${v.from} -> ${v.to}`).sort())
      .toEqual([
        'src/corpus/conversations/write.js -> src/corpus/appliers/writers/episode-graphs.js',
        'src/corpus/ingest-jobs.js -> src/corpus/appliers/writers/documents.js',
        'src/http/routes/ingest.js -> src/corpus/appliers/documents.js'
      ])
  }, 120_000)

  it('the documents\' catch-up is imported by the shared catalog besides the write path, and a reader\'s state (a document library\'s, the namespace models\') by the reader and its writers alone', () => {
    const { violations } = cruise(['src', 'adapters'], 'test/fixtures/import-rules')
    const of = (rule: string) => violations.filter((v) => v.rule.name === rule).map((v) => `${v.from} -> ${v.to}`).sort()
    expect(of('catch-up-through-the-shared-catalog')).toEqual(['src/corpus/ingest-jobs.js -> src/corpus/appliers/writers/document-catch-up.js'])
    expect(of('reader-state-for-the-reader-and-its-writers')).toEqual([
      'src/corpus/ingest-jobs.js -> src/corpus/documents/library-state.js',
      'src/corpus/ingest-jobs.js -> src/corpus/namespace-model-state.js'
    ])
  }, 120_000)
})
