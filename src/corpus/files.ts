import { readdir, readFile, stat } from 'node:fs/promises'
import { basename, extname, join, relative, resolve } from 'node:path'
import type { DocumentInput } from './documents.js'
import { parseMarkdown } from './chunker.js'

const TEXT_EXTENSIONS = new Set(['.md', '.markdown', '.txt'])

/** Every `.md`/`.markdown`/`.txt` file under the given files or folders, sorted, with its root. */
export async function findTextFiles(paths: readonly string[]): Promise<{ file: string; root: string }[]> {
  const found: { file: string; root: string }[] = []
  for (const p of paths) {
    const abs = resolve(p)
    const info = await stat(abs).catch(() => null)
    if (!info) throw new Error(`no such file or folder: ${p}`)
    if (info.isFile()) {
      found.push({ file: abs, root: resolve(abs, '..') })
      continue
    }
    for (const file of await walk(abs)) found.push({ file, root: abs })
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : 1))
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue
    const full = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...await walk(full))
    else if (TEXT_EXTENSIONS.has(extname(entry.name).toLowerCase())) out.push(full)
  }
  return out
}

/**
 * A file as a document: the id is the front-matter `id`, else the path below its root without the
 * extension, with `/` turned into `-`; `source` is the path below the root.
 */
export async function readDocumentFile(file: string, root: string): Promise<DocumentInput> {
  const text = await readFile(file, 'utf8')
  const rel = relative(root, file) || basename(file)
  const { frontMatter } = parseMarkdown(text)
  const id = frontMatter.id ?? rel.replace(/\.[^.]+$/, '').split(/[\\/]/).join('-').replace(/[#\s]+/g, '_')
  return { id, text, source: rel.split('\\').join('/'), ...(frontMatter.title ? { title: frontMatter.title } : {}) }
}

export async function readDocuments(paths: readonly string[]): Promise<DocumentInput[]> {
  const files = await findTextFiles(paths)
  return Promise.all(files.map(({ file, root }) => readDocumentFile(file, root)))
}
