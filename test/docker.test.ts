import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { EnvSchema, loadConfig } from '../src/config.js'
import { QDRANT_SERVER_DIR } from './helpers/reference-data.js'

// No Docker engine runs here, so the files are checked for what can go wrong without one: variables the
// service does not read, floating image tags, a health check that is not /readyz, a start command that
// differs from `npm start`, and COPY sources that do not exist.

/** The version of the Qdrant server the tests run against, where that server is there. */
const QDRANT_SERVER_VERSION = join(QDRANT_SERVER_DIR, 'VERSION')

interface Instruction { keyword: string; args: string }

/** The Dockerfile's instructions, continuation lines joined and comments dropped. */
function dockerfile(path: string): Instruction[] {
  const logical: string[] = []
  let current = ''
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#') || (line === '' && current === '')) continue
    current += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line
    if (!line.endsWith('\\')) {
      if (current.trim() !== '') logical.push(current.trim())
      current = ''
    }
  }
  return logical.map((l) => {
    const [keyword, ...rest] = l.split(/\s+/)
    return { keyword: keyword!.toUpperCase(), args: rest.join(' ') }
  })
}

interface Service {
  image?: string
  build?: { context: string; dockerfile: string }
  environment?: Record<string, string | number | boolean | null> | string[]
  volumes?: string[]
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { test: string[] | string }
  ports?: string[]
}
const compose = parse(readFileSync('docker/compose.yaml', 'utf8')) as { services: Record<string, Service>; volumes?: Record<string, unknown> }
const instructions = dockerfile('docker/Dockerfile')
const recall = compose.services.recall!

/** `KEY: value` or `KEY=value` entries, with `${VAR:-default}` read as its default (what compose does when VAR is unset). */
function environment(service: Service): Record<string, string> {
  const entries = Array.isArray(service.environment)
    ? service.environment.map((e) => { const i = e.indexOf('='); return [e.slice(0, i), e.slice(i + 1)] as const })
    : Object.entries(service.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)] as const)
  return Object.fromEntries(entries.map(([k, v]) => [k, v.replace(/\$\{\w+:-([^}]*)\}/g, '$1')]))
}

/** `ENV A=1 B=2` pairs of the final stage. */
function imageEnvironment(): Record<string, string> {
  const lastFrom = instructions.map((i) => i.keyword).lastIndexOf('FROM')
  const pairs = instructions.slice(lastFrom).filter((i) => i.keyword === 'ENV').flatMap((i) => i.args.split(/\s+/))
  return Object.fromEntries(pairs.map((p) => p.split('=') as [string, string]))
}

const pinned = (image: string) => /@sha256:[0-9a-f]{64}$/.test(image) || /:v?\d+\.\d+\.\d+(-[\w.-]+)?$/.test(image)
const readVariables = Object.keys(EnvSchema.properties)

describe('docker/compose.yaml', () => {
  it('starts Qdrant, Neo4j 5.26, Redis and recall, the service built from docker/Dockerfile', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['neo4j', 'qdrant', 'recall', 'redis'])
    expect(compose.services.neo4j!.image).toMatch(/^neo4j:5\.26\.\d+/)
    expect(recall.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' })
  })

  it('sets only variables the service reads (src/config.ts), with values it accepts', () => {
    const env = environment(recall)
    expect(Object.keys(env).filter((k) => !readVariables.includes(k))).toEqual([])
    expect(Object.keys(imageEnvironment()).filter((k) => !readVariables.includes(k))).toEqual([])
    const config = loadConfig({ ...imageEnvironment(), ...env })
    expect(config.vector).toMatchObject({ backend: 'qdrant', url: 'http://qdrant:6333' })
    expect(config.graph).toMatchObject({ backend: 'neo4j', uri: 'bolt://neo4j:7687', user: 'neo4j' })
    expect(config.cache.redisUrl).toBe('redis://redis:6379')
    expect(config.host).toBe('0.0.0.0')
  })

  it('points the service at the other services by their compose names and the ports they listen on', () => {
    const env = environment(recall)
    expect(new URL(env.QDRANT_URL!).host).toBe('qdrant:6333')
    expect(new URL(env.NEO4J_URI!).host).toBe('neo4j:7687')
    expect(new URL(env.REDIS_URL!).host).toBe('redis:6379')
    expect(env.NEO4J_PASSWORD).toBe(environment(compose.services.neo4j!).NEO4J_AUTH!.replace(/^neo4j\//, ''))
  })

  it('pins every image to a version', () => {
    const images = Object.values(compose.services).flatMap((s) => (s.image ? [s.image] : []))
    expect(images).toHaveLength(3)
    expect(images.filter((i) => !pinned(i))).toEqual([])
  })

  it('keeps data in named volumes and starts recall once its backends are healthy', () => {
    const declared = Object.keys(compose.volumes ?? {})
    for (const [name, service] of Object.entries(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!
        expect(declared, `${name} mounts ${volume}`).toContain(source)
      }
    }
    expect(recall.depends_on).toEqual({
      qdrant: { condition: 'service_healthy' }, neo4j: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' }
    })
    for (const name of ['qdrant', 'neo4j', 'redis']) expect(compose.services[name]!.healthcheck, name).toBeDefined()
  })
})

// The second compose file: two replicas behind nginx (docker/nginx.conf). YAML merge keys (`<<: *recall`) are
// read as compose reads them.
const replicasFile = parse(readFileSync('docker/compose.replicas.yaml', 'utf8'), { merge: true }) as typeof compose
const nginxConf = readFileSync('docker/nginx.conf', 'utf8').replace(/#.*$/gm, '')
const replicaNames = Object.keys(replicasFile.services).filter((n) => /^recall-\d+$/.test(n)).sort()

/** The `server host:port` lines of the nginx upstream that `proxy_pass` names. */
function proxiedUpstreams(): { upstream: string; servers: string[] } {
  const upstream = /proxy_pass\s+http:\/\/([\w-]+)\s*;/.exec(nginxConf)?.[1] ?? ''
  const block = new RegExp(`upstream\\s+${upstream}\\s*\\{([^}]*)\\}`).exec(nginxConf)?.[1] ?? ''
  return { upstream, servers: [...block.matchAll(/^\s*server\s+([^\s;]+)/gm)].map((m) => m[1]!) }
}

describe('docker/compose.replicas.yaml', () => {
  const services = replicasFile.services

  it('runs two recall replicas built from docker/Dockerfile behind a proxy, over one Qdrant, Neo4j and Redis', () => {
    expect(Object.keys(services).sort()).toEqual(['neo4j', 'proxy', 'qdrant', 'recall-1', 'recall-2', 'redis'])
    for (const name of replicaNames) expect(services[name]!.build, name).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' })
    expect(services.proxy!.image).toMatch(/^nginx:\d+\.\d+\.\d+-alpine$/)
    // the same backing images as the single-replica file, the Qdrant the tests run against
    for (const name of ['qdrant', 'neo4j', 'redis']) expect(services[name]!.image, name).toBe(compose.services[name]!.image)
    if (existsSync(QDRANT_SERVER_VERSION)) {
      expect(services.qdrant!.image).toBe(`qdrant/qdrant:v${readFileSync(QDRANT_SERVER_VERSION, 'utf8').trim()}`)
    }
  })

  it('pins every image to a version', () => {
    const images = Object.values(services).flatMap((s) => (s.image ? [s.image] : []))
    expect(images).toHaveLength(4)
    expect(images.filter((i) => !pinned(i))).toEqual([])
  })

  it('configures each replica for shared state: REPLICAS=2, Qdrant for both legs, Neo4j, Redis, behind a proxy', () => {
    for (const name of replicaNames) {
      const env = environment(services[name]!)
      expect(Object.keys(env).filter((k) => !readVariables.includes(k)), name).toEqual([])
      const config = loadConfig({ ...imageEnvironment(), ...env })
      expect(config.replicas.count, name).toBe(replicaNames.length)
      expect(config.vector, name).toMatchObject({ backend: 'qdrant', url: 'http://qdrant:6333' })
      expect(config.lexical, name).toMatchObject({ backend: 'qdrant' })
      expect(config.graph, name).toMatchObject({ backend: 'neo4j', uri: 'bolt://neo4j:7687', user: 'neo4j' })
      expect(config.cache.redisUrl, name).toBe('redis://redis:6379')
      expect(config.security.trustProxy, name).toBe(true)
      expect(new URL(env.QDRANT_URL!).host).toBe('qdrant:6333')
      expect(new URL(env.NEO4J_URI!).host).toBe('neo4j:7687')
      expect(new URL(env.REDIS_URL!).host).toBe('redis:6379')
      expect(env.NEO4J_PASSWORD).toBe(environment(services.neo4j!).NEO4J_AUTH!.replace(/^neo4j\//, ''))
      // the image's health check (GET /readyz) is the replica's: compose neither overrides it nor the port
      expect(services[name]!.healthcheck, name).toBeUndefined()
      expect(env.PORT, name).toBeUndefined()
      expect(services[name]!.ports, `${name} is reached through the proxy only`).toBeUndefined()
    }
    // exactly one replica loads the demo world, and the other starts after it is ready
    expect(replicaNames.filter((n) => environment(services[n]!).DEMO_DATA === 'true')).toEqual(['recall-1'])
    expect(services['recall-2']!.depends_on!['recall-1']).toEqual({ condition: 'service_healthy' })
  })

  it('checks the health of every service, and starts each once what it needs is healthy', () => {
    for (const name of ['qdrant', 'neo4j', 'redis', 'proxy']) expect(services[name]!.healthcheck, name).toBeDefined()
    for (const name of replicaNames) {
      expect(services[name]!.depends_on, name).toMatchObject({
        qdrant: { condition: 'service_healthy' }, neo4j: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' }
      })
    }
    expect(services.proxy!.depends_on).toEqual(Object.fromEntries(replicaNames.map((n) => [n, { condition: 'service_healthy' }])))
    expect(JSON.stringify(services.proxy!.healthcheck!.test)).toContain('http://127.0.0.1:80/healthz')
  })

  it('keeps data in named volumes, one DATA_DIR per replica', () => {
    const declared = Object.keys(replicasFile.volumes ?? {})
    const mounts = (name: string) => (services[name]!.volumes ?? []).map((v) => v.split(':'))
    for (const name of Object.keys(services)) {
      for (const [source] of mounts(name)) {
        if (source!.startsWith('./')) expect(existsSync(`docker/${source!.slice(2)}`), `${name} mounts ${source}`).toBe(true)
        else expect(declared, `${name} mounts ${source}`).toContain(source)
      }
    }
    const dataVolumes = replicaNames.map((n) => mounts(n).find(([, target]) => target === imageEnvironment().DATA_DIR)?.[0])
    expect(new Set(dataVolumes).size).toBe(replicaNames.length)
  })

  it('mounts docker/nginx.conf, whose upstream lists every replica at the port the image listens on', () => {
    expect(services.proxy!.volumes).toContain('./nginx.conf:/etc/nginx/nginx.conf:ro')
    const { upstream, servers } = proxiedUpstreams()
    expect(upstream).not.toBe('')
    expect(servers.sort()).toEqual(replicaNames.map((n) => `${n}:${imageEnvironment().PORT}`))
    // passive health: a failed replica is skipped for a while, and a failed idempotent request retried on the other
    expect(nginxConf).toMatch(new RegExp(`server\\s+${replicaNames[0]}:\\d+\\s+max_fails=\\d+\\s+fail_timeout=\\d+s`))
    expect(nginxConf).toMatch(/proxy_next_upstream\s+error\s+timeout/)
    // the port compose publishes is the one nginx listens on, and the one the proxy's health check asks
    const listen = /^\s*listen\s+(\d+)\s*;/m.exec(nginxConf)?.[1]
    expect(services.proxy!.ports).toEqual([`3000:${listen}`])
    // the proxy accepts the bodies the service accepts
    const limit = /client_max_body_size\s+(\d+)m;/.exec(nginxConf)?.[1]
    expect(Number(limit) * 1024 * 1024).toBeGreaterThanOrEqual(loadConfig({}).limits.bodyLimitBytes)
  })
})

// The third file, laid over the second as `docker compose -f compose.replicas.yaml -f compose.qdrant-cluster.yaml` does:
// a service's maps (environment, depends_on, networks) merge, its other keys are replaced.
const clusterFile = parse(readFileSync('docker/compose.qdrant-cluster.yaml', 'utf8'), { merge: true }) as {
  services: Record<string, Service & { command?: string; networks?: Record<string, { aliases?: string[] }> }>; volumes?: Record<string, unknown>
}
type ClusterService = (typeof clusterFile.services)[string]
function overlay(base: Record<string, ClusterService>, over: Record<string, ClusterService>): Record<string, ClusterService> {
  const merged: Record<string, ClusterService> = { ...base }
  for (const [name, service] of Object.entries(over)) {
    const under = merged[name] ?? {}
    merged[name] = { ...under, ...service }
    for (const key of ['environment', 'depends_on', 'networks'] as const) {
      if (under[key] && service[key]) (merged[name] as Record<string, unknown>)[key] = { ...under[key] as object, ...service[key] as object }
    }
  }
  return merged
}

describe('docker/compose.qdrant-cluster.yaml over compose.replicas.yaml', () => {
  const services = overlay(replicasFile.services, clusterFile.services)
  const nodes = ['qdrant', 'qdrant-2', 'qdrant-3']
  /** The names a node answers to on the compose network: its service name and its aliases. */
  const names = (n: string) => [n, ...(services[n]!.networks?.default?.aliases ?? [])]

  it('runs three Qdrant nodes of the image the tests run against, in one cluster, each with storage of its own', () => {
    expect(Object.keys(services).filter((n) => /^qdrant/.test(n)).sort()).toEqual(nodes)
    for (const n of nodes) {
      expect(services[n]!.image, n).toBe(compose.services.qdrant!.image)
      expect(environment(services[n]!).QDRANT__CLUSTER__ENABLED, n).toBe('true')
      expect(services[n]!.healthcheck, n).toBeDefined()
    }
    const storage = nodes.map((n) => services[n]!.volumes!.find((v) => v.endsWith(':/qdrant/storage'))!.split(':')[0]!)
    expect(new Set(storage).size).toBe(3)
    const declared = { ...replicasFile.volumes, ...clusterFile.volumes }
    for (const v of storage) expect(declared, v).toHaveProperty(v)
    // the first node starts the Raft log at the peer address it answers to; the others join it at that address
    const uri = (n: string) => /--uri (\S+)/.exec(services[n]!.command ?? '')?.[1]
    const first = new URL(uri('qdrant')!)
    expect(names('qdrant')).toContain(first.hostname)
    expect(/--bootstrap/.test(services.qdrant!.command!)).toBe(false)
    for (const n of ['qdrant-2', 'qdrant-3']) {
      expect(/--bootstrap (\S+)/.exec(services[n]!.command!)?.[1], n).toBe(first.href.replace(/\/$/, ''))
      expect(names(n), n).toContain(new URL(uri(n)!).hostname)
      expect(new URL(uri(n)!).port).toBe(first.port)
      expect(services[n]!.depends_on, n).toMatchObject({ qdrant: { condition: 'service_healthy' } })
    }
    // and every node answers to the name the replicas' QDRANT_URL uses
    for (const n of nodes) expect(names(n), n).toContain(new URL(environment(services['recall-1']!).QDRANT_URL!).hostname)
  })

  it('has each replica create 3 shards in 2 replicas, once every node is up', () => {
    for (const name of replicaNames) {
      const env = environment(services[name]!)
      expect(Object.keys(env).filter((k) => !readVariables.includes(k)), name).toEqual([])
      const config = loadConfig({ ...imageEnvironment(), ...env })
      expect(config.vector, name).toMatchObject({
        backend: 'qdrant', cluster: { shardNumber: 3, replicationFactor: 2, writeConsistencyFactor: 1, readConsistency: 1 }
      })
      for (const n of nodes) expect(services[name]!.depends_on![n], `${name} waits for ${n}`).toEqual({ condition: 'service_healthy' })
    }
  })
})

describe('docker/Dockerfile', () => {
  const froms = instructions.filter((i) => i.keyword === 'FROM').map((i) => i.args)

  it('is multi-stage, every base image pinned to a version', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2)
    const stages = new Set(froms.map((f) => / AS (\S+)$/i.exec(f)?.[1]))
    const bases = froms.map((f) => f.split(/\s+/)[0]!).filter((b) => !stages.has(b))
    expect(bases.filter((b) => !pinned(b))).toEqual([])
  })

  it('starts the service with the command `npm start` runs (the image\'s own Node, so without scripts/with-node.sh)', () => {
    const cmd = instructions.filter((i) => i.keyword === 'CMD').at(-1)!
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
    expect(pkg.scripts.start.startsWith('sh scripts/with-node.sh ')).toBe(true)
    expect((JSON.parse(cmd.args) as string[]).join(' ')).toBe(pkg.scripts.start.slice('sh scripts/with-node.sh '.length))
  })

  it('checks health on GET /readyz at the port it listens on, and compose does not override that', () => {
    const health = instructions.find((i) => i.keyword === 'HEALTHCHECK')!
    const port = imageEnvironment().PORT
    expect(health.args).toContain(`http://127.0.0.1:${port}/readyz`)
    expect(health.args).toMatch(/r\.ok \? 0 : 1/)
    expect(instructions.find((i) => i.keyword === 'EXPOSE')!.args).toBe(port)
    expect(environment(recall).PORT).toBeUndefined()
    expect(recall.healthcheck).toBeUndefined()
  })

  it('copies only what exists in the repository', () => {
    const sources = instructions
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1))
    expect(sources.length).toBeGreaterThan(5)
    expect(sources.filter((s) => !existsSync(s))).toEqual([])
    // The demo world and the /demo page ship with the image.
    expect(sources).toContain('demo')
    expect(existsSync('demo/page/index.html')).toBe(true)
  })
})
