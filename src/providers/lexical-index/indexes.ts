import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { checkNamespace, DEFAULT_NAMESPACE, namespaceDir } from '../namespace.js'
import { backendName, type BackendHealth } from '../errors.js'
import { EmbeddedLexicalIndex, type EmbeddedLexicalIndexOptions } from './embedded.js'
import type { LexicalIndexes } from './port.js'
import type { ServiceAnalyzer } from '../../kernel/analyzers.js'

export interface EmbeddedLexicalIndexesOptions extends Omit<EmbeddedLexicalIndexOptions, 'dir'> {
  /** Root folder (`DATA_DIR/bm25`). */
  dir: string
  /** The index's folder name under it, e.g. `chunks`. */
  name: string
}

/**
 * One `EmbeddedLexicalIndex` per namespace, all served by the one lexical worker. `default` keeps the folder
 * a version without namespaces used (`<dir>/<name>`), so its saved segments are reused as they are; another
 * namespace's index lives in `<dir>/namespaces/<namespace>/<name>`.
 */
export class EmbeddedLexicalIndexes implements LexicalIndexes {
  private readonly indexes = new Map<string, EmbeddedLexicalIndex>()

  constructor(private readonly options: EmbeddedLexicalIndexesOptions) {}

  get analyzer(): ServiceAnalyzer {
    const { analyzer } = this.options
    return analyzer === undefined || analyzer === 'whitespace' ? 'cjk-bigram' : analyzer
  }

  get(namespace: string): EmbeddedLexicalIndex {
    let index = this.indexes.get(namespace)
    if (!index) {
      const { dir: _root, name: _name, ...rest } = this.options
      index = new EmbeddedLexicalIndex({ ...rest, dir: this.folder(checkNamespace(namespace)) })
      this.indexes.set(namespace, index)
    }
    return index
  }

  async drop(namespace: string): Promise<void> {
    const index = this.indexes.get(checkNamespace(namespace))
    this.indexes.delete(namespace)
    await index?.close()
    await rm(namespace === DEFAULT_NAMESPACE ? this.folder(namespace) : namespaceDir(this.options.dir, namespace), { recursive: true, force: true })
  }

  async health(): Promise<BackendHealth> {
    const all = [...this.indexes.values()]
    const reports = await Promise.all(all.map((i) => i.health()))
    const failing = reports.filter((r) => !r.ok)
    const documents = all.reduce((n, i) => n + i.size, 0)
    return {
      backend: backendName('lexical-index', 'bm25'),
      ok: failing.length === 0,
      latency_ms: 0,
      detail: `${documents} documents in ${all.length} namespace${all.length === 1 ? '' : 's'}` +
        (failing.length > 0 ? `; ${failing.map((r) => r.detail).join('; ')}` : '')
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.indexes.values()].map((i) => i.close()))
  }

  private folder(namespace: string): string {
    return join(namespaceDir(this.options.dir, namespace), this.options.name)
  }
}
