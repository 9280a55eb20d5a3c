/**
 * Folds a DATA_DIR's knowledge-graph log (namespace `default`) into its snapshot with a checkout's own store code, in a
 * process of its own: the files a fold leaves (that checkout's snapshot form, an empty log), so that a restart reads a
 * snapshot alone. `format` is the store format the checkout writes (1 before the compact snapshot, 2 from it).
 */
import { execFileSync } from 'node:child_process'
import { rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

export async function foldGraphWith(treeDir: string, dataDir: string, format: number): Promise<void> {
  const script = join(resolve(dataDir), '..', `fold-graph-${process.pid}-${Date.now()}.mjs`)
  const module = (path: string) => JSON.stringify(pathToFileURL(join(resolve(treeDir), path)).href)
  await writeFile(script, [
    `const { DurableLog } = await import(${module('src/providers/embedded/durable-log.ts')})`,
    `const { foldKnowledgeGraph } = await import(${module('src/providers/knowledge-graph/embedded.ts')})`,
    `const { log, snapshot, records } = await DurableLog.open({ backend: 'fold', kind: 'knowledge-graph', format: ${format}, reads: [1], dir: ${JSON.stringify(join(resolve(dataDir), 'graph'))}, name: 'knowledge-graph' })`,
    'if (records.length > 0) await log.compact(foldKnowledgeGraph(snapshot, records))'
  ].join('\n'))
  try {
    execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: treeDir, stdio: 'inherit' })
  } finally {
    await rm(script, { force: true })
  }
}

/**
 * Folds every vector collection's log (namespace `default`) of a DATA_DIR into its snapshot with a checkout's own store
 * code, in a process of its own: the snapshot form that checkout writes (format 2 from issue 44's columns, 1 before), an
 * empty log.
 */
export async function foldVectorsWith(treeDir: string, dataDir: string): Promise<void> {
  const script = join(resolve(dataDir), '..', `fold-vectors-${process.pid}-${Date.now()}.mjs`)
  const module = (path: string) => JSON.stringify(pathToFileURL(join(resolve(treeDir), path)).href)
  const dir = JSON.stringify(join(resolve(dataDir), 'vectors'))
  await writeFile(script, [
    `const { EmbeddedVectorStore } = await import(${module('src/providers/vector-store/embedded.ts')})`,
    `const { readdir } = await import('node:fs/promises')`,
    `const store = new EmbeddedVectorStore({ dir: ${dir} })`,
    `for (const file of (await readdir(${dir})).filter((f) => f.endsWith('.snap'))) {`,
    '  const collection = decodeURIComponent(file.slice(0, -5))',
    // the store's own compaction, as a write that outgrows the snapshot runs it
    `  await store.exclusive(collection, 'default', async (slot) => { const c = await store.load(collection, 'default', slot); if (c) await store.compact(collection, 'default', c) })`,
    '}',
    'await store.close()'
  ].join('\n'))
  try {
    execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: treeDir, stdio: 'inherit' })
  } finally {
    await rm(script, { force: true })
  }
}
