/**
 * Where the junk line goes (docs/formats.md, "Junk, normalised characters"): per corpus, how many texts hold
 * meaningless characters (normalised away), and the share of junk left after normalising (U+FFFD, C1 controls, lone
 * surrogates), with how many texts each candidate line would refuse. Corpora:
 *
 * - `--titles DIR`: the KUAKE-QTR files of CBLUE (`KUAKE-QTR_{train,dev,test}.json`), every `title` a text;
 * - `--docs DIR`: a folder of real files (the vue docs-zh-cn site's `src/guide` + `src/api`), read by their formats;
 * - `test/fixtures/files/` (real files made by LibreOffice and iconv), read by their formats;
 * - the same files decoded in the wrong encoding (UTF-8 read as windows-1252, ISO-8859-1 and GB18030, GBK read as
 *   UTF-8 and Big5, UTF-16 read as UTF-8 and ISO-8859-1);
 * - binary files named as text (`--binaries FILE...`, default: some of this machine's executables, libraries,
 *   images and archives): as the file readers read them (a NUL byte makes them binary before any junk check), and
 *   decoded as UTF-8, windows-1252 and ISO-8859-1 anyway (what a client that sends them as a JSON string does).
 *
 * Nothing is written. Writes bench/results/junk-line.json.
 *
 *   npx tsx bench/junk-line.ts --titles /tmp/KUAKE-QTR --docs /tmp/docs-zh-cn/src [--binaries /bin/ls ...]
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { extname, join } from 'node:path'
import { parseArgs } from 'node:util'
import iconv from 'iconv-lite'
import { readFileByFormat } from '../src/corpus/formats/index.js'
import { decodeBytes } from '../src/corpus/formats/encoding.js'
import { junkCount } from '../src/corpus/text-junk.js'
import { normaliseText } from '../src/corpus/text-normalise.js'

const { values } = parseArgs({ options: { titles: { type: 'string' }, docs: { type: 'string' }, binaries: { type: 'string', multiple: true } } })
const LINES = [0.001, 0.005, 0.01, 0.02, 0.05]
const DEFAULT_BINARIES = ['/bin/true', '/bin/ls', '/usr/bin/node', '/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/share/pixmaps/debian-logo.png',
  '/usr/share/doc/bash/changelog.Debian.gz', 'node_modules/unpdf/dist/pdfjs.mjs.gz']

interface Text { name: string; text: string }

async function walk(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...await walk(p))
    else if (['.md', '.txt', '.html', '.pdf', '.docx'].includes(extname(e.name))) out.push(p)
  }
  return out.sort()
}

/** A text as the file readers give it, before their junk check: the normalised text is judged. */
async function readAsDocument(file: string): Promise<Text | { name: string; refused: string }> {
  const reading = await readFileByFormat(file, { judge: false })
  return reading.outcome === 'read' ? { name: file, text: reading.text } : { name: file, refused: reading.reason }
}

function measure(corpus: string, texts: Text[], refusedEarlier: Array<{ name: string; refused: string }> = []) {
  let normalisedTexts = 0
  let normalisedChars = 0
  const shares: number[] = []
  const shareBefore: number[] = []
  for (const { text } of texts) {
    const before = junkCount(text)
    const { text: clean, normalised } = normaliseText(text)
    if (normalised > 0) normalisedTexts++
    normalisedChars += normalised
    const after = junkCount(clean)
    shares.push(after.chars === 0 ? 0 : after.junk / after.chars)
    shareBefore.push(before.chars === 0 ? 0 : before.junk / before.chars)
  }
  const sorted = [...shares].sort((a, b) => a - b)
  const pct = (s: number) => Number((s * 100).toFixed(3))
  return {
    corpus, texts: texts.length, refused_before_reading: refusedEarlier.length, refused_before_reading_reasons: [...new Set(refusedEarlier.map((r) => r.refused.replace(/\d+/g, 'N')))],
    normalised_texts: normalisedTexts, normalised_chars: normalisedChars,
    junk_share_after_percent: { min: pct(sorted[0] ?? 0), median: pct(sorted[Math.floor(sorted.length / 2)] ?? 0), max: pct(sorted.at(-1) ?? 0) },
    refused_at_line_before_normalising: Object.fromEntries(LINES.map((l) => [`${l * 100}%`, shareBefore.filter((s) => s > l).length])),
    refused_at_line_after_normalising: Object.fromEntries(LINES.map((l) => [`${l * 100}%`, shares.filter((s) => s > l).length]))
  }
}

const results = []
if (values.titles) {
  const titles: Text[] = []
  for (const split of ['train', 'dev', 'test']) {
    const rows = JSON.parse(await readFile(join(values.titles, `KUAKE-QTR_${split}.json`), 'utf8')) as Array<{ id: string; title: string }>
    titles.push(...rows.map((r) => ({ name: `${split}:${r.id}`, text: r.title })))
  }
  results.push(measure('KUAKE-QTR titles (train + dev + test)', titles))
}
const fileCorpora: Array<[string, string]> = [['test/fixtures/files', 'test/fixtures/files']]
if (values.docs) fileCorpora.unshift(['vue docs-zh-cn', values.docs])
const realFiles: string[] = []
for (const [name, dir] of fileCorpora) {
  const files = await walk(dir)
  realFiles.push(...files)
  const read = await Promise.all(files.map(readAsDocument))
  results.push(measure(`${name}: files as read`, read.filter((r): r is Text => 'text' in r), read.filter((r): r is { name: string; refused: string } => 'refused' in r)))
}

// the same files' bytes decoded in a wrong encoding
const wrong: Record<string, Text[]> = {}
for (const file of realFiles.filter((f) => ['.md', '.txt', '.html'].includes(extname(f)))) {
  const bytes = await readFile(file)
  const decoded = decodeBytes(bytes)
  if (!('text' in decoded)) continue
  const others = decoded.encoding === 'UTF-8' ? ['windows-1252', 'ISO-8859-1', 'GB18030']
    : decoded.encoding.startsWith('UTF-16') ? ['UTF-8', 'ISO-8859-1']
      : decoded.encoding === 'GB18030' ? ['UTF-8', 'Big5'] : ['UTF-8', 'GB18030']
  for (const encoding of others) (wrong[`${decoded.encoding} read as ${encoding}`] ??= []).push({ name: file, text: iconv.decode(bytes, encoding) })
}
for (const [name, texts] of Object.entries(wrong)) results.push(measure(`wrongly decoded: ${name}`, texts))

// binary files named as text
const binaries = (values.binaries ?? DEFAULT_BINARIES)
const present: string[] = []
for (const b of binaries) if (await stat(b).then((s) => s.isFile(), () => false)) present.push(b)
const asRead: Text[] = []
const refusedBinaries: Array<{ name: string; refused: string }> = []
const forced: Record<string, Text[]> = {}
for (const file of present) {
  const bytes = (await readFile(file)).subarray(0, 1024 * 1024)
  const decoded = decodeBytes(bytes)
  if ('binary' in decoded) refusedBinaries.push({ name: file, refused: decoded.binary })
  else asRead.push({ name: file, text: decoded.text })
  for (const encoding of ['UTF-8', 'windows-1252', 'ISO-8859-1']) (forced[encoding] ??= []).push({ name: file, text: iconv.decode(bytes, encoding) })
}
results.push({ ...measure('binary files named .txt, as read', asRead, refusedBinaries), files: present })
for (const [encoding, texts] of Object.entries(forced)) results.push(measure(`binary files decoded as ${encoding} anyway`, texts))

const load = loadavg().map((l) => Number(l.toFixed(2)))
const out = { measured_at: new Date().toISOString(), node: process.version, load, results }
await writeFile('bench/results/junk-line.json', `${JSON.stringify(out, null, 2)}\n`)
for (const r of results) console.log(JSON.stringify(r))
console.log(`load ${load.join(' ')}`)
