import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import createWink from 'wink-bm25-text-search'
import { analyze } from '../../text/cjk-analyzer.js'
import type { BackendHealth } from '../errors.js'
import { BM25_PARAMS, computeTermWeights, scoreQuery, type TermWeights } from './bm25.js'
import type { LexicalDocument, LexicalHit, LexicalIndex } from './port.js'

type Searcher = (tokens: string[], limit: number) => [string, number][]

// Tokens never contain a space, so the analyzer runs once per document and wink only splits.
const splitTokens = (joined: string) => (joined === '' ? [] : joined.split(' '))

function winkSearcher(docs: readonly { id: string; tokens: string[] }[], exported?: string): { search: Searcher; exported: string } {
  const engine = createWink()
  if (exported) {
    engine.importJSON(exported)
  } else {
    engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { ...BM25_PARAMS } })
    engine.definePrepTasks([splitTokens])
    for (const d of docs) engine.addDoc({ body: d.tokens.join(' ') }, d.id)
    engine.consolidate()
  }
  engine.definePrepTasks([splitTokens])
  return {
    search: (tokens, limit) => engine.search(tokens.join(' '), limit),
    exported: exported ?? engine.exportJSON()
  }
}

function smallSearcher(docs: readonly { id: string; tokens: string[] }[]): Searcher {
  const index: TermWeights = computeTermWeights(docs)
  return (tokens) => [...scoreQuery(index, tokens)]
}

function sortHits(hits: [string, number][], limit: number): LexicalHit[] {
  return hits
    .filter(([, score]) => score > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([id, score]) => ({ id, score }))
}

export interface WinkLexicalIndexOptions {
  /** Where the built index is saved; loaded at the next start when its fingerprint still matches. */
  persistPath?: string
  /** Tokens of a text; default the CJK bigram analyzer. Other analyzers exist for comparisons in bench/. */
  analyzer?: (text: string) => string[]
}

/** wink-bm25-text-search behind the LexicalIndex port, with the exact small-corpus scorer below 3 documents. */
export class WinkLexicalIndex implements LexicalIndex {
  private searcher: Searcher = () => []
  private count = 0
  private generation = 0
  /** Tokens of the documents of the current index, reused by the next rebuild for unchanged texts. */
  private tokenCache = new Map<string, { text: string; tokens: string[] }>()

  constructor(private readonly options: WinkLexicalIndexOptions = {}) {}

  get size(): number { return this.count }
  get version(): number { return this.generation }

  async rebuild(documents: readonly LexicalDocument[]): Promise<void> {
    const analyzer = this.options.analyzer ?? analyze
    const nextCache = new Map<string, { text: string; tokens: string[] }>()
    const docs = documents.map((d) => {
      const cached = this.tokenCache.get(d.id)
      const tokens = cached && cached.text === d.text ? cached.tokens : analyzer(d.text)
      nextCache.set(d.id, { text: d.text, tokens })
      return { id: d.id, tokens }
    })
    const fingerprint = fingerprintOf(docs)
    let next: Searcher
    if (docs.length < 3) {
      next = smallSearcher(docs)
    } else {
      const saved = await this.loadSaved(fingerprint)
      const built = winkSearcher(docs, saved)
      next = built.search
      if (!saved) await this.save(fingerprint, built.exported)
    }
    this.searcher = next
    this.tokenCache = nextCache
    this.count = docs.length
    this.generation += 1
  }

  async search(query: string, limit: number): Promise<LexicalHit[]> {
    const tokens = (this.options.analyzer ?? analyze)(query)
    if (tokens.length === 0 || this.count === 0) return []
    // wink breaks ties at its cut-off in insertion order; fetch past the cut so that our id order decides.
    return sortHits(this.searcher(tokens, Math.max(limit * 2, limit + 20)), limit)
  }

  async health(): Promise<BackendHealth> {
    return { backend: 'bm25', ok: true, latency_ms: 0, detail: `${this.count} documents` }
  }

  async close(): Promise<void> {}

  private async loadSaved(fingerprint: string): Promise<string | undefined> {
    if (!this.options.persistPath) return undefined
    try {
      const saved = JSON.parse(await readFile(this.options.persistPath, 'utf8')) as { fingerprint?: string; wink?: string }
      return saved.fingerprint === fingerprint ? saved.wink : undefined
    } catch {
      return undefined
    }
  }

  private async save(fingerprint: string, wink: string): Promise<void> {
    const path = this.options.persistPath
    if (!path) return
    await mkdir(dirname(path), { recursive: true })
    await writeFile(`${path}.tmp`, JSON.stringify({ fingerprint, wink }))
    await rename(`${path}.tmp`, path)
  }
}

function fingerprintOf(docs: readonly { id: string; tokens: string[] }[]): string {
  const hash = createHash('sha256')
  for (const d of docs) hash.update(d.id).update('\u0000').update(d.tokens.join(' ')).update('\u0001')
  return hash.digest('hex')
}
