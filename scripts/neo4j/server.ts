/**
 * A real Neo4j 5.26 Community for tests and local use, run from Maven Central artifacts with no Docker.
 *
 * `startNeo4j()` resolves the classpath of `pom.xml` once through Maven (cached under `.cache/neo4j/`),
 * runs `Launcher.java` on it as a single source file with Bolt on 127.0.0.1 and a free port, and resolves
 * when the server prints its ready line. `stop()` ends the process group; `restart()` starts it again on
 * the same port and data directory.
 *
 * As a command (`tsx scripts/neo4j/server.ts [--port 7687] [--data DIR]`, or `make neo4j`) it runs one in
 * the foreground until interrupted.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, '..', '..')
const POM = join(HERE, 'pom.xml')
const LAUNCHER = join(HERE, 'Launcher.java')
const CACHE_DIR = join(ROOT, '.cache', 'neo4j')
const READY = /^NEO4J READY (bolt:\/\/\S+)/m

/** The JVM flags Neo4j's own launcher passes on Java 17. */
const JVM_FLAGS = [
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '-XX:+UseSerialGC'
]

export interface StartNeo4jOptions {
  /** Bolt port on 127.0.0.1. Default: a free port picked at start. */
  port?: number
  /** Store directory. Default: a fresh temporary directory, removed by `stop()`. */
  dataDir?: string
  /** JVM maximum heap, as `-Xmx` takes it. Default `1g`. */
  heap?: string
  /** How long to wait for the ready line, in milliseconds. Default 180 000 (the first start downloads jars). */
  startTimeoutMs?: number
}

export interface Neo4jServer {
  /** `bolt://127.0.0.1:<port>`, no auth, no encryption. */
  readonly uri: string
  readonly port: number
  readonly dataDir: string
  /** The server's process id while it runs (a bench reads its CPU time from /proc). */
  readonly pid: number | undefined
  /** Stops the server and waits for its process to exit; removes the data directory if `startNeo4j` made it. */
  stop(): Promise<void>
  /** Stops the server, keeping its data, and starts it again on the same port. */
  restart(): Promise<void>
  /** Stops the server process but keeps its data and port for `resume()` (to test an outage). */
  pause(): Promise<void>
  /** Starts a paused server again on the same port and data; resolves when it is ready. */
  resume(): Promise<void>
}

/** Starts a Neo4j server and resolves once it accepts Bolt connections. */
export async function startNeo4j(opts: StartNeo4jOptions = {}): Promise<Neo4jServer> {
  const classpath = await resolveClasspath()
  const ownsDataDir = opts.dataDir === undefined
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'recall-neo4j-')))
  await mkdir(dataDir, { recursive: true })
  const heap = opts.heap ?? '1g'
  const timeoutMs = opts.startTimeoutMs ?? 180_000

  let port = opts.port ?? (await pickFreePort())
  let child: ChildProcess
  for (let attempt = 1; ; attempt++) {
    try {
      child = await launch(classpath, port, dataDir, heap, timeoutMs)
      break
    } catch (error) {
      // Another process may take the picked port between picking and binding: pick again.
      if (opts.port !== undefined || attempt >= 3) {
        if (ownsDataDir) await rm(dataDir, { recursive: true, force: true })
        throw error
      }
      port = await pickFreePort()
    }
  }

  let stopped = false
  let running = true
  const server: Neo4jServer = {
    uri: `bolt://127.0.0.1:${port}`,
    port,
    dataDir,
    get pid() {
      return running ? child.pid : undefined
    },
    async stop() {
      if (stopped) return
      stopped = true
      running = false
      await terminate(child)
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true })
    },
    async pause() {
      if (stopped) throw new Error('Neo4j server was stopped; start a new one')
      running = false
      await terminate(child)
    },
    async resume() {
      if (stopped) throw new Error('Neo4j server was stopped; start a new one')
      if (running) return
      child = await launch(classpath, port, dataDir, heap, timeoutMs)
      running = true
    },
    async restart() {
      await server.pause()
      await server.resume()
    }
  }
  return server
}

/** The classpath of pom.xml, from the cache when the pom has not changed and every jar is still there. */
export async function resolveClasspath(): Promise<string> {
  const pom = await readFile(POM)
  const key = createHash('sha256').update(pom).digest('hex').slice(0, 16)
  const file = join(CACHE_DIR, `classpath-${key}.txt`)
  if (existsSync(file)) {
    const cached = (await readFile(file, 'utf8')).trim()
    if (cached.split(':').every((jar) => existsSync(jar))) return cached
  }
  await mkdir(CACHE_DIR, { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  try {
    await promisify(execFile)(
      'mvn',
      ['-q', '-B', '-f', POM, 'dependency:build-classpath', `-Dmdep.outputFile=${tmp}`],
      { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 }
    )
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`resolving the Neo4j classpath with Maven failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
  // Rename is atomic, so a concurrent start reads either no file or a whole one.
  await rename(tmp, file)
  return (await readFile(file, 'utf8')).trim()
}

/** Runs the launcher and resolves with its process once it printed the ready line. */
function launch(classpath: string, port: number, dataDir: string, heap: string, timeoutMs: number): Promise<ChildProcess> {
  const child = spawn(
    'java',
    [...JVM_FLAGS, `-Xmx${heap}`, '-cp', classpath, LAUNCHER, String(port), dataDir, '--exit-on-eof'],
    // Its own process group, so stop() can end the JVM and anything it started; stdin stays open because
    // the launcher exits when it closes (the parent died).
    { detached: true, stdio: ['pipe', 'pipe', 'pipe'] }
  )
  return new Promise((resolvePromise, reject) => {
    let output = ''
    const timer = setTimeout(() => {
      fail(new Error(`Neo4j did not start within ${timeoutMs} ms on port ${port}\n${output}`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      if (output.length > 64_000) output = output.slice(-32_000)
      if (READY.test(output)) {
        clearTimeout(timer)
        child.off('exit', onExit)
        // Keep draining the pipes so the JVM never blocks on a full one.
        child.stdout?.off('data', onData).resume()
        child.stderr?.off('data', onData).resume()
        resolvePromise(child)
      }
    }
    const onExit = (code: number | null, signal: string | null) => {
      fail(new Error(`Neo4j exited before it was ready (code ${code}, signal ${signal}) on port ${port}\n${output}`))
    }
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.off('exit', onExit)
      void terminate(child).finally(() => reject(error))
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', onExit)
    child.once('error', (error) => fail(error))
  })
}

/** Ends the process group: SIGTERM (the launcher shuts the database down cleanly), SIGKILL after 20 s. */
async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((done) => child.once('exit', () => done()))
  signalGroup(child, 'SIGTERM')
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 20_000)
  await exited
  clearTimeout(timer)
  child.stdin?.destroy()
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // The group is already gone.
  }
}

/** A port the OS reports free on 127.0.0.1 right now. */
function pickFreePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => {
        if (address && typeof address === 'object') resolvePromise(address.port)
        else reject(new Error('could not pick a free port'))
      })
    })
  })
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--prepare')) {
    // Only fetch the jars and cache the classpath (setup on a fresh machine), then exit.
    await resolveClasspath()
    process.stdout.write('Neo4j jars ready\n')
    return
  }
  const value = (flag: string) => {
    const i = argv.indexOf(flag)
    return i >= 0 ? argv[i + 1] : undefined
  }
  const port = Number(value('--port') ?? 7687)
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--port must be a port number, got ${value('--port')}`)
  const dataDir = resolve(value('--data') ?? join(CACHE_DIR, 'data'))
  process.stdout.write(`starting Neo4j on 127.0.0.1:${port} with data in ${dataDir} …\n`)
  const server = await startNeo4j({ port, dataDir })
  process.stdout.write(`Neo4j ready: NEO4J_URI=${server.uri} (no auth); Ctrl-C stops it\n`)
  await new Promise<void>((done) => {
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
  await server.stop()
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
