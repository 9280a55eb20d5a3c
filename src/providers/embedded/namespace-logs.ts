import { join } from 'node:path'
import { BackendUnavailableError, errorMessage } from '../errors.js'
import { DEFAULT_NAMESPACE, namespaceDir, storedNamespaces } from '../namespace.js'
import { DurableLog, type DurableLogOptions, type Recovered } from './durable-log.js'

export interface NamespaceLogsOptions extends Omit<DurableLogOptions, 'dir' | 'ownsDir' | 'legacy'> {
  /** The store's folder: `default`'s files live in it, another namespace's in `namespaces/<namespace>/`. */
  root: string
  /** The whole-state JSON file an earlier version kept in each namespace's folder, upgraded at open. */
  legacy?: { name: string; upgrade(bytes: Buffer): Uint8Array }
}

/**
 * One embedded store's durable logs, one per namespace (one folder per namespace, `namespace.ts`): opened
 * all at once at start-up, or one at a time when a write names a namespace with no files yet.
 */
export class NamespaceLogs {
  private readonly logs = new Map<string, DurableLog>()

  constructor(private readonly options: NamespaceLogsOptions) {}

  /** Opens the log of every namespace with a folder (and `default`'s) and returns what each held. */
  async openAll(): Promise<Map<string, Recovered>> {
    const others = await storedNamespaces(this.options.root).catch((error: unknown) => {
      throw new BackendUnavailableError(this.options.backend, `cannot read ${this.options.root}: ${errorMessage(error)}`, { cause: error })
    })
    const found = new Map<string, Recovered>()
    for (const namespace of [DEFAULT_NAMESPACE, ...others]) {
      const { log, ...recovered } = await DurableLog.open(this.logOptions(namespace))
      this.logs.set(namespace, log)
      found.set(namespace, recovered)
    }
    return found
  }

  /** The namespace's log; one with no files yet when `openAll` did not find it (its first append creates them). */
  async get(namespace: string): Promise<DurableLog> {
    let log = this.logs.get(namespace)
    if (!log) {
      log = (await DurableLog.open(this.logOptions(namespace))).log
      this.logs.set(namespace, log)
    }
    return log
  }

  async drop(namespace: string): Promise<void> {
    await (await this.get(namespace)).drop()
  }

  async close(): Promise<void> {
    for (const log of this.logs.values()) await log.close()
  }

  private logOptions(namespace: string): DurableLogOptions {
    const { root, legacy, ...rest } = this.options
    const dir = namespaceDir(root, namespace)
    return {
      ...rest, dir, ownsDir: namespace !== DEFAULT_NAMESPACE,
      ...(legacy ? { legacy: { file: join(dir, legacy.name), upgrade: legacy.upgrade } } : {})
    }
  }
}
