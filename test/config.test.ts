import { describe, expect, it } from 'vitest'
import { ConfigError, EnvSchema, loadConfig } from '../src/config.js'

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  return []
}

describe('loadConfig', () => {
  it('runs on the embedded defaults with no variable set', () => {
    const c = loadConfig({})
    expect(c.port).toBe(3000)
    expect(c.vector).toEqual({ backend: 'memory' })
    expect(c.graph).toEqual({ backend: 'memory' })
    expect(c.embedder).toEqual({ backend: 'local', modelDir: './models', model: 'bge-small-zh-v1.5', threads: 1 })
    expect(c.demoData).toBe(true)
    expect(c.collectionPrefix).toBe('recall_')
  })

  it.each([
    [{ PORT: 'abc' }, 'PORT="abc": must be an integer'],
    [{ PORT: '70000' }, 'PORT=70000: must be between 0 and 65535'],
    [{ VECTOR_BACKEND: 'faiss' }, 'VECTOR_BACKEND="faiss": must be one of memory | qdrant'],
    [{ EMBEDDER: 'cohere' }, 'EMBEDDER="cohere": must be one of local | openai'],
    [{ DEMO_DATA: 'yes' }, 'DEMO_DATA="yes": must be one of true | false'],
    [{ QDRANT_URL: 'localhost:6333' }, 'QDRANT_URL="localhost:6333": must match ^https?://'],
    [{ VECTOR_BACKEND: 'qdrant' }, 'VECTOR_BACKEND=qdrant needs QDRANT_URL'],
    [{ GRAPH_BACKEND: 'neo4j' }, 'GRAPH_BACKEND=neo4j needs NEO4J_URI'],
    [{ EMBEDDER: 'openai', EMBEDDING_MODEL: 'm' }, 'EMBEDDER=openai needs EMBEDDING_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": must be one of fatal | error | warn | info | debug | trace | silent']
  ])('names the bad variable: %o', (env, message) => {
    expect(problems(env)).toEqual([message])
  })

  it('reads API_KEYS entries as keys for every namespace or, with =ns1|ns2, for those only', () => {
    expect(loadConfig({ API_KEYS: 'admin,ka=tenant-a,kab=tenant-a|tenant-b' }).security.apiKeys).toEqual([
      { key: 'admin' }, { key: 'ka', namespaces: ['tenant-a'] }, { key: 'kab', namespaces: ['tenant-a', 'tenant-b'] }
    ])
  })

  it.each([
    ['admin,k=Tenant', 'API_KEYS entry 2: namespace "Tenant" does not match ^[a-z0-9][a-z0-9_-]{0,62}$'],
    ['k=a||b', 'API_KEYS entry 1: namespace "" does not match ^[a-z0-9][a-z0-9_-]{0,62}$'],
    ['k=', 'API_KEYS entry 1: namespace "" does not match ^[a-z0-9][a-z0-9_-]{0,62}$'],
    ['=tenant-a', 'API_KEYS entry 1: the key before "=" is empty']
  ])('a bad API_KEYS entry stops the start, naming API_KEYS and the entry, never the key: %s', (value, message) => {
    const found = problems({ API_KEYS: value })
    expect(found).toEqual([message])
    expect(found.join(' ')).not.toContain('admin')
  })

  it('reports every bad variable at once', () => {
    expect(problems({ PORT: 'x', VECTOR_BACKEND: 'y' })).toHaveLength(2)
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', QDRANT_URL: '' }).port).toBe(3000)
  })

  it('builds the qdrant and openai settings', () => {
    const c = loadConfig({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: 'http://q:6333', QDRANT_API_KEY: 'k',
      EMBEDDER: 'openai', EMBEDDING_URL: 'http://e:8080', EMBEDDING_MODEL: 'bge', EMBEDDING_DIMENSIONS: '512'
    })
    expect(c.vector).toEqual({ backend: 'qdrant', url: 'http://q:6333', apiKey: 'k' })
    expect(c.embedder).toEqual({ backend: 'openai', url: 'http://e:8080', model: 'bge', dimensions: 512 })
  })
})

describe('the defaults written in the config schema', () => {
  // The schema's `default` is what docs/configuration.md publishes: setting a variable to it must change nothing.
  const documented = Object.entries(EnvSchema.properties as Record<string, { default?: string | number }>)
    .filter(([, s]) => s.default !== undefined)
  it('are given for every variable but those that are off when unset or whose default is derived', () => {
    expect(Object.keys(EnvSchema.properties).filter((name) => !documented.some(([n]) => n === name)).sort()).toEqual([
      'API_KEYS', 'CORS_ORIGINS', 'EMBEDDING_API_KEY', 'EMBEDDING_DIMENSIONS', 'EMBEDDING_URL', 'LEXICAL_BACKEND', 'MAX_EMBEDDING_WAIT_MS',
      'NEO4J_DATABASE', 'NEO4J_URI', 'QDRANT_API_KEY', 'QDRANT_URL', 'REDIS_URL'
    ])
  })
  it.each(documented)('%s', (name, schema) => {
    expect(loadConfig({ [name]: String(schema.default) })).toEqual(loadConfig({}))
  })
})
