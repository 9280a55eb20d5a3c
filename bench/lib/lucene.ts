import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rename } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'

const HERE = resolve(import.meta.dirname, '..', 'lucene')
const CACHE = resolve(import.meta.dirname, '..', '..', '.cache', 'lucene')

/** The classpath of bench/lucene/pom.xml, resolved once by Maven and cached under .cache/lucene/. */
async function classpath(): Promise<string> {
  const file = join(CACHE, 'classpath.txt')
  if (existsSync(file)) {
    const cached = (await readFile(file, 'utf8')).trim()
    if (cached.split(':').every((jar) => existsSync(jar))) return cached
  }
  await mkdir(CACHE, { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  await promisify(execFile)('mvn', ['-q', '-B', '-f', join(HERE, 'pom.xml'), 'dependency:build-classpath', `-Dmdep.outputFile=${tmp}`], { timeout: 15 * 60_000 })
  await rename(tmp, file)
  return (await readFile(file, 'utf8')).trim()
}

/** LuceneBench.java in a child JVM, one command at a time over stdin, one JSON line back per command. */
export class LuceneProcess {
  private constructor(private readonly child: ChildProcess, private readonly lines: AsyncIterator<string>, readonly version: string) {}

  static async start(heap = '4g'): Promise<LuceneProcess> {
    const child = spawn('java', [`-Xmx${heap}`, '-XX:+UseParallelGC', '-cp', await classpath(), join(HERE, 'LuceneBench.java')], { stdio: ['pipe', 'pipe', 'inherit'] })
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
    const ready = JSON.parse((await lines.next()).value as string) as { lucene: string; java: string }
    return new LuceneProcess(child, lines, `Lucene ${ready.lucene} on Java ${ready.java}`)
  }

  async send<T>(command: string): Promise<T> {
    this.child.stdin!.write(`${command}\n`)
    const { value, done } = await this.lines.next()
    if (done) throw new Error('the Lucene process ended')
    return JSON.parse(value as string) as T
  }

  async stop(): Promise<void> {
    this.child.stdin!.end('quit\n')
    await new Promise((r) => this.child.once('exit', r))
  }
}

/** A text as one TSV field: the analyzers treat tabs and line breaks as spaces, so they become spaces. */
export const tsvField = (text: string) => text.replace(/[\t\r\n]/g, ' ')
