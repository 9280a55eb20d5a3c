import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from './src/config.js'
import { openServices } from './src/services.js'
const dir = await mkdtemp(join(tmpdir(), 'smoke-'))
const s = await openServices(loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: '/work/main/models' }))
const doc = { id: 'auth', text: '# 鉴权中间件\n\n鉴权中间件由平台组负责维护。它依赖 Redis 保存会话。\n\n## 部署\n\n鉴权中间件部署在网关之前，使用 RS256 校验令牌。' }
let t = performance.now()
const w = await s.corpus.write('x', { kind: 'documents', op: 'upsert', documents: [doc] })
console.log(JSON.stringify(w.derived), Math.round(performance.now() - t))
console.log(await s.episodes.countByType('x'))
const f = await s.episodes.describe('x', ['d:ep:auth'])
console.log(JSON.stringify([...f.nodes.values()], null, 1).slice(0, 3000))
const w2 = await s.corpus.write('x', { kind: 'documents', op: 'upsert', documents: [doc] })
console.log('again', JSON.stringify(w2.derived))
const w3 = await s.corpus.write('x', { kind: 'documents', op: 'delete', ids: ['auth'] })
console.log('deleted', JSON.stringify(w3.derived), await s.episodes.countByType('x'))
await s.close()
