import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DataDirSoleWriterRegistry, thisProcess } from '../../src/corpus/sole-writer/index.js'
import { describeSoleWriterRegistryContract } from '../contracts/sole-writer-registry.contract.js'

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describeSoleWriterRegistryContract('data-dir', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-writer-'))
  dirs.push(dir)
  return {
    open: () => new DataDirSoleWriterRegistry({ dir: join(dir, 'data') }),
    async drop() { await rm(dir, { recursive: true, force: true }) }
  }
})

describe('DataDirSoleWriterRegistry on this host', () => {
  it('frees a DATA_DIR at once when the registered process is gone (its lease still running)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-writer-'))
    dirs.push(dir)
    const child = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => child.on('exit', resolve))
    const gone = { ...thisProcess(), pid: child.pid! }
    expect(await new DataDirSoleWriterRegistry({ dir }).claim(gone, 60_000)).toEqual({ held: true })
    const alive = thisProcess()
    expect(await new DataDirSoleWriterRegistry({ dir }).claim(alive, 60_000)).toEqual({ held: true })
    // and a live one holds it for the whole lease
    expect(await new DataDirSoleWriterRegistry({ dir }).claim(thisProcess(), 60_000)).toMatchObject({ held: false, holder: alive })
  })
})
