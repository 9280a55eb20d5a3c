import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../scripts/lib/free-port.js'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'

// docker/nginx.conf run for real, by the nginx on PATH (Debian's nginx-light; scripts/setup.sh installs it), in
// front of two recall processes: only the upstream addresses and the listen port are rewritten, the rest is the
// file compose mounts. Each replica here has its own embedded stores (the proxy's behaviour is what is tested;
// shared state is test/scale-out/'s).
const nginxBin = ['nginx', '/usr/sbin/nginx'].find((bin) => spawnSync(bin, ['-v']).status === 0)
const hasNginx = nginxBin !== undefined
if (!hasNginx) console.warn('docker-proxy.test.ts skipped: no nginx on PATH (Debian: apt-get install -y nginx-light)')

/** docker/nginx.conf with `replicas[i]` for `recall-<i+1>:3000` and `listen` on `port`; each must occur once. */
function renderNginxConf(conf: string, replicas: readonly string[], port: number): string {
  const swap = (text: string, from: RegExp, to: string) => {
    const hits = text.match(new RegExp(from.source, 'gm'))?.length ?? 0
    if (hits !== 1) throw new Error(`docker/nginx.conf: expected one ${from.source}, found ${hits}`)
    return text.replace(from, to)
  }
  let out = swap(conf, /^(\s*)listen 80;/m, `$1listen 127.0.0.1:${port};`)
  replicas.forEach((address, i) => { out = swap(out, new RegExp(`^(\\s*)server recall-${i + 1}:3000 `, 'm'), `$1server ${address} `) })
  return out
}

const doc = { namespace: 'default', documents: [{ id: 'proxy-doc', text: '# 夜间值班\n\n夜间告警由二线值班工程师处理。' }] }

describe.skipIf(!hasNginx)('docker/nginx.conf in front of two recall processes', () => {
  let a: ServerProcess
  let b: ServerProcess
  let nginx: ChildProcess
  let proxy: string
  let dir: string
  const address = (s: ServerProcess) => new URL(s.url).host

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-nginx-'))
    const replicas = await Promise.all([0, 1].map(async (i) => startServer({
      DATA_DIR: join(dir, `data-${i}`), DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', RATE_LIMIT_MAX: '0'
    })))
    a = replicas[0]!
    b = replicas[1]!
    const port = await freePort()
    const conf = renderNginxConf(await readFile('docker/nginx.conf', 'utf8'), [address(a), address(b)], port)
    await writeFile(join(dir, 'nginx.conf'), conf)
    nginx = spawn(nginxBin!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    nginx.stderr!.on('data', (d) => { err += String(d) })
    proxy = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 10_000
    for (;;) {
      if (nginx.exitCode !== null) throw new Error(`nginx exited with ${nginx.exitCode}: ${err}`)
      try { if ((await fetch(`${proxy}/healthz`)).ok) break } catch { /* not listening yet */ }
      if (Date.now() > deadline) throw new Error(`nginx did not answer: ${err}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    // the same document in each replica's own stores, so that either can answer the retrieve below
    for (const s of [a, b]) {
      const r = await fetch(`${s.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) })
      expect(r.status, await r.text()).toBe(200)
    }
  })

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx.once('exit', r))
      nginx.kill('SIGTERM')
      await exited
    }
    await Promise.all([a?.kill(), b?.kill()])
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('sends requests to the replicas in turn, bodies and answers passed through', async () => {
    const upstreams: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${proxy}/retrieve?mode=hybrid&q=${encodeURIComponent('夜间告警谁处理')}&top_k=3`)
      expect(r.status).toBe(200)
      const body = await r.json() as { recall_bundle: Array<{ id: string; text: string }> }
      expect(body.recall_bundle[0]!.text).toContain('二线值班工程师')
      upstreams.push(r.headers.get('x-recall-upstream')!)
    }
    // round-robin: strictly alternating, five each
    expect(upstreams.filter((u) => u === address(a)).length).toBe(5)
    expect(upstreams.filter((u) => u === address(b)).length).toBe(5)
    for (let i = 1; i < upstreams.length; i++) expect(upstreams[i]).not.toBe(upstreams[i - 1])
    const analyzed = await fetch(`${proxy}/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '流式返回' }) })
    expect(await analyzed.json()).toEqual({ tokens: ['流式', '式返', '返回'] })
  })

  it('routes around a killed replica: no request fails, and it gets no traffic afterwards', async () => {
    await b.kill('SIGKILL')
    const upstreams: string[] = []
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${proxy}/retrieve?mode=hybrid&q=${encodeURIComponent('夜间告警')}&top_k=3`)
      expect(r.status, await r.clone().text()).toBe(200)
      upstreams.push(r.headers.get('x-recall-upstream')!)
    }
    // a request that found B gone was retried on A within the same call (`$upstream_addr` lists both)
    for (const u of upstreams) expect(u.split(', ').at(-1)).toBe(address(a))
    // B's turn comes within the first two; once it failed there, B is passed over (fail_timeout)
    const triedB = upstreams.flatMap((u, i) => (u.includes(address(b)) ? [i] : []))
    expect(triedB).toHaveLength(1)
    expect(triedB[0]).toBeLessThanOrEqual(1)
    // a write goes through as well (B refused the connection, so nginx never sent it there)
    const r = await fetch(`${proxy}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(doc) })
    expect(r.status).toBe(200)
    expect(r.headers.get('x-recall-upstream')).toBe(address(a))
  })
})
