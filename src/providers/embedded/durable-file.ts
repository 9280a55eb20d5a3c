import { open, rename } from 'node:fs/promises'
import { dirname } from 'node:path'

/** fsyncs a folder, so that a rename or a new file in it survives a machine crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Replaces `file` with `bytes` atomically and durably: write a temporary file beside it, fsync it, rename
 * it over `file`, fsync the folder. After a crash the file holds either the old bytes or the new ones.
 */
export async function writeFileDurably(file: string, bytes: Uint8Array): Promise<void> {
  const temp = `${file}.tmp`
  const handle = await open(temp, 'w')
  try {
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temp, file)
  await syncDir(dirname(file))
}
