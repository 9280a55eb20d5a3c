import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { splitSentences } from '../../src/corpus/chunker.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import { contentHash } from '../../src/providers/lexical-index/segment.js'

import { seededRandom } from '../../src/evaluation/statistics.js'

/** A small deterministic PRNG (mulberry32, the one `/evaluate` bootstraps with), so every run builds the same corpus. */
export const rng = seededRandom

/**
 * `count` one-chunk documents of real Chinese text: windows of 2 to 5 consecutive sentences of the source
 * paragraphs, then, once those run out, sentences drawn from two different paragraphs.
 */
export function syntheticDocuments(paragraphs: readonly string[], count: number, seed = 7): DocumentInput[] {
  const sentences = paragraphs.map((p) => splitSentences(p))
  const out: DocumentInput[] = []
  const seen = new Set<string>()
  const push = (text: string) => {
    if (out.length >= count || seen.has(text) || [...text].length > 400 || text.length < 20) return
    seen.add(text)
    out.push({ id: `syn-${out.length}`, text })
  }
  for (let len = 2; len <= 5 && out.length < count; len++) {
    sentences.forEach((s) => { for (let i = 0; i + len <= s.length; i++) push(s.slice(i, i + len).join('')) })
  }
  const random = rng(seed)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  let guard = 0
  while (out.length < count && guard++ < count * 20) {
    const a = pick(sentences)
    const b = pick(sentences)
    if (a.length === 0 || b.length === 0) continue
    push(`${pick(a)}${pick(b)}${pick(a)}`)
  }
  return out
}

/** A stand-in passage vector: a unit vector of 512 dimensions seeded by the text's hash (same text, same vector). */
export function standIn(text: string): Float32Array {
  const random = rng(contentHash(text)[0])
  const v = new Float32Array(512)
  let norm = 0
  for (let d = 0; d < 512; d++) { v[d] = random() - 0.5; norm += v[d]! * v[d]! }
  norm = Math.sqrt(norm)
  for (let d = 0; d < 512; d++) v[d]! /= norm
  return v
}

/** An embedder that runs no model: every text, query or passage, gets its stand-in vector (free, deterministic). */
export const standInEmbedder: Embedder = {
  model: 'stand-in', dimensions: 512,
  async embedQueries(texts) { return texts.map(standIn) },
  async embedPassages(texts) { return texts.map(standIn) },
  async health() { return { backend: 'embedder:stand-in', ok: true, latency_ms: 0 } },
  async close() {}
}

/**
 * Documents of `perDocument` sections each, every section one of `passages` in order, titled `资料第N篇` with numbered
 * `## 第N节` sections (the memory benches' and the re-ingest benches' corpus); ids `mem-0000000` … .
 */
export function* sectionedDocuments(passages: readonly string[], perDocument: number): Generator<{ id: string; title: string; text: string }> {
  for (let i = 0; (i + 1) * perDocument <= passages.length; i++) {
    const sections = Array.from({ length: perDocument }, (_, s) => `## 第${s + 1}节\n\n${passages[i * perDocument + s]}`)
    yield { id: `mem-${String(i).padStart(7, '0')}`, title: `资料第${i}篇`, text: `# 资料第${i}篇\n\n${sections.join('\n\n')}\n` }
  }
}

/** A folder of `files` Markdown files of `perFile` sections each, made of CMRC text: `doc-0000.md` … . */
export async function writeSectionedFolder(folder: string, cmrcTexts: readonly string[], files: number, perFile: number): Promise<void> {
  const passages = syntheticDocuments(cmrcTexts, files * perFile).map((d) => d.text)
  let i = 0
  for (const doc of sectionedDocuments(passages, perFile)) await writeFile(join(folder, `doc-${String(i++).padStart(4, '0')}.md`), doc.text)
}
