/**
 * A checkout of recall loaded into this process (the benches' `--base DIR`: this tree beside an earlier main, in one
 * run). Its modules are imported by path from its own sources, so each tree runs its own service code while the bench's
 * corpus, embedder and load client are the same for both. The service API is given in one shape: the main before the
 * runtime (b50e7a5 and older) opened services with providers rather than hooks and built the app on the services; until
 * issue 46 the runtime was made in src/services.ts, `buildApp` took the config beside it and the write path was
 * `services.corpus`.
 */
import { execFileSync, fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance } from 'fastify'

// another tree's modules have their own types, not this one's: they are handled as untyped
type Module = Record<string, any>

export interface Tree {
  /** `this`, or `base`. */
  name: string
  dir: string
  /** Its HEAD, short. */
  commit: string
  /** One of its modules by path from its root, e.g. `src/config.ts`. */
  module(path: string): Promise<Module>
  loadConfig(env: Record<string, string>): Promise<any>
  /**
   * Its services over `config`, with some providers replaced, each start-up step tried once; `loadDemo` loads the demo
   * world into empty stores, as the server does (passed to a tree whose services take hooks).
   */
  openServices(config: unknown, replace: (providers: any) => any, options?: { loadDemo?: boolean }): Promise<any>
  /** Its app on those services (never listening). */
  buildApp(config: unknown, services: unknown): Promise<FastifyInstance>
  /** Writes a change through its services' write path. */
  write(services: any, namespace: string, change: unknown): Promise<unknown>
  /**
   * Resolves once its services' start-up steps (the demo world's loading among them) and the background writes they
   * asked for (the entity-names write: every name's vector) have ended, so that what is asked next is answered over all
   * of what was written, not over the part the background work had reached.
   */
  settled(services: any): Promise<void>
}

export function loadTree(name: string, dir: string): Tree {
  const root = resolve(dir)
  const module = (path: string): Promise<Module> => import(pathToFileURL(join(root, path)).href) as Promise<Module>
  const servicesSource = readFileSync(join(root, 'src/services.ts'), 'utf8')
  const hooksTakeProviders = servicesSource.includes('providers?: (base: Providers) => Providers')
  return {
    name, dir: root,
    commit: execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    module,
    loadConfig: async (env) => (await module('src/config.ts')).loadConfig(env),
    async openServices(config, replace, options) {
      const services = await module('src/services.ts')
      return hooksTakeProviders
        ? services.openServices(config, { providers: replace, ...(options?.loadDemo ? { loadDemo: true } : {}) })
        : services.openServices(config, replace(services.createProviders(config)))
    },
    async buildApp(config, services) {
      const [{ buildApp }, root, runtimeModule] = await Promise.all([module('src/http/app.ts'), module('src/services.ts'), module('src/runtime.ts').catch((): Module => ({}))])
      const createRuntime = runtimeModule.createRuntime ?? root.createRuntime
      const runtime = createRuntime ? createRuntime(services) : services
      // (config, runtime, options) before issue 46, (runtime, options) since
      return (buildApp.length >= 2 ? buildApp(config, runtime, { logger: false }) : buildApp(runtime, { logger: false })) as Promise<FastifyInstance>
    },
    write: (services, namespace, change) => (services.writePath ?? services.corpus).write(namespace, change),
    async settled(services) {
      // a tree before start-up steps or entity vectors has neither, and nothing of this to wait for
      await services.startup?.settled?.()
      await services.writePath?.entityNamesIdle?.()
    }
  }
}

/**
 * Runs this very bench script again as a child measuring one tree (`--worker <tree dir> --name <name> …extra`), with a
 * heap limit high enough to measure and `gc` exposed; resolves with the one message the child sends.
 */
export function measureInChild(script: string, tree: Tree, extra: readonly string[]): Promise<Record<string, unknown>> {
  const child = fork(script, ['--worker', tree.dir, '--name', tree.name, ...extra], {
    execArgv: ['--expose-gc', '--max-old-space-size=16384', '--import', 'tsx']
  })
  return new Promise((done, fail) => {
    child.once('message', (m) => done(m as Record<string, unknown>))
    child.once('exit', (code) => code !== 0 && fail(new Error(`${tree.name} exited ${code}`)))
  })
}
