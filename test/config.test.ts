import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { ConfigError, EnvSchema, loadConfig } from '../src/config.js'
import { modeDeployment } from '../src/modes.js'

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
    expect(c.vector).toEqual({ backend: 'memory', precision: 'int8', oversample: 4 })
    expect(loadConfig({ VECTOR_PRECISION: 'float32' }).vector).toEqual({ backend: 'memory', precision: 'float32', oversample: 4 })
    // The knowledge graph in a thread of its own with a second core and no budget given; the episodic graph only when asked.
    const many = availableParallelism() > 1
    const machineBudget = c.memory.source === 'machine'
    // Fold threads: any number without a budget given, one at a time under one.
    const folds = machineBudget ? 0 : 1
    expect(c.graph).toEqual({ backend: 'memory', thread: many && machineBudget, episodicThread: false, foldThreads: folds })
    expect(loadConfig({ MEMORY_LIMIT: '6GiB' }).graph).toEqual({ backend: 'memory', thread: false, episodicThread: false, foldThreads: 1 })
    expect(loadConfig({ MEMORY_LIMIT: '6GiB', GRAPH_THREAD: 'true' }).graph).toEqual({ backend: 'memory', thread: true, episodicThread: false, foldThreads: 1 })
    expect(loadConfig({ MEMORY_LIMIT: '6GiB', FOLD_THREADS: '0' }).graph).toEqual({ backend: 'memory', thread: false, episodicThread: false, foldThreads: 0 })
    expect(loadConfig({ FOLD_THREADS: '2' }).graph).toEqual({ backend: 'memory', thread: many && machineBudget, episodicThread: false, foldThreads: 2 })
    expect(() => loadConfig({ FOLD_THREADS: '-1' })).toThrow(/FOLD_THREADS/)
    expect(loadConfig({ GRAPH_THREAD: 'false' }).graph).toEqual({ backend: 'memory', thread: false, episodicThread: false, foldThreads: folds })
    expect(loadConfig({ GRAPH_THREAD: 'true' }).graph).toEqual({ backend: 'memory', thread: true, episodicThread: false, foldThreads: folds })
    expect(loadConfig({ GRAPH_THREAD: 'false', EPISODIC_THREAD: 'true' }).graph).toEqual({ backend: 'memory', thread: false, episodicThread: true, foldThreads: folds })
    const cores = availableParallelism()
    expect(c.embedder).toEqual({ backend: 'local', modelDir: './models', model: 'bge-small-zh-v1.5', threads: 1, spinning: true, sessions: cores > 1 ? cores : 0, pool: 'threads', queriesHere: false, weights: 'shared' })
    expect(c.demoData).toBe(true)
    expect(c.collectionPrefix).toBe('recall_')
  })

  it('DERIVED_EPISODE_ENTITY_LINKS and _MIN_MENTIONS set the entities a derived Facet and Episode link to (none by default; mentioned twice)', () => {
    expect(loadConfig({}).derivation.episodeEntityLinks).toEqual({ perFacet: 0, perEpisode: 0, minMentions: 2 })
    expect(loadConfig({ DERIVED_EPISODE_ENTITY_LINKS: '4,8' }).derivation.episodeEntityLinks).toEqual({ perFacet: 4, perEpisode: 8, minMentions: 2 })
    expect(loadConfig({ DERIVED_EPISODE_ENTITY_LINKS: '2,4', DERIVED_EPISODE_ENTITY_MIN_MENTIONS: '1' }).derivation.episodeEntityLinks)
      .toEqual({ perFacet: 2, perEpisode: 4, minMentions: 1 })
    expect(() => loadConfig({ DERIVED_EPISODE_ENTITY_LINKS: '4' })).toThrow(/DERIVED_EPISODE_ENTITY_LINKS="4"/)
    expect(() => loadConfig({ DERIVED_EPISODE_ENTITY_MIN_MENTIONS: '0' })).toThrow(/DERIVED_EPISODE_ENTITY_MIN_MENTIONS=0: must be between 1 and 100/)
  })

  it('GRAPHRAG_PARTIAL_NAMES turns graphrag\'s partial name matching off (on by default) and reaches the mode deployment', () => {
    expect(loadConfig({}).graphrag).toEqual({ partialNames: true, evidenceFallback: true, entityVectors: true, meaningFloor: 0.55 })
    expect(loadConfig({ GRAPHRAG_PARTIAL_NAMES: 'false' }).graphrag).toEqual({ partialNames: false, evidenceFallback: true, entityVectors: true, meaningFloor: 0.55 })
    const names = { embedder: 'e', vectors: 'v', lexical: 'l', graph: 'g', episodes: 'p' }
    expect(modeDeployment(loadConfig({ GRAPHRAG_PARTIAL_NAMES: 'false' }), names).graphragPartialNames).toBe(false)
    expect(modeDeployment(loadConfig({}), names).graphragPartialNames).toBe(true)
  })

  it('ENTITY_VECTORS and GRAPHRAG_MEANING_FLOOR reach the mode deployment; a floor outside 0..1 or not a number is refused by name', () => {
    const names = { embedder: 'e', vectors: 'v', lexical: 'l', graph: 'g', episodes: 'p' }
    expect(modeDeployment(loadConfig({}), names).graphragMeaningFloor).toBe(0.55)
    expect(modeDeployment(loadConfig({ GRAPHRAG_MEANING_FLOOR: '0.62' }), names).graphragMeaningFloor).toBe(0.62)
    expect(modeDeployment(loadConfig({ ENTITY_VECTORS: 'false' }), names).graphragMeaningFloor).toBeUndefined()
    expect(() => loadConfig({ GRAPHRAG_MEANING_FLOOR: '1.5' })).toThrow('GRAPHRAG_MEANING_FLOOR=1.5: must be between 0 and 1')
    expect(() => loadConfig({ GRAPHRAG_MEANING_FLOOR: 'high' })).toThrow('GRAPHRAG_MEANING_FLOOR="high": must be a number')
    expect(() => loadConfig({ ENTITY_VECTORS: 'yes' })).toThrow('ENTITY_VECTORS="yes"')
  })

  it('GRAPHRAG_EVIDENCE_FALLBACK turns graphrag\'s fallback over the best-matching chunks off (on by default) and reaches the mode deployment', () => {
    expect(loadConfig({ GRAPHRAG_EVIDENCE_FALLBACK: 'false' }).graphrag).toEqual({ partialNames: true, evidenceFallback: false, entityVectors: true, meaningFloor: 0.55 })
    const names = { embedder: 'e', vectors: 'v', lexical: 'l', graph: 'g', episodes: 'p' }
    expect(modeDeployment(loadConfig({ GRAPHRAG_EVIDENCE_FALLBACK: 'false' }), names).graphragEvidenceFallback).toBe(false)
    expect(modeDeployment(loadConfig({}), names).graphragEvidenceFallback).toBe(true)
  })

  it('EMBEDDING_SESSIONS sets the embedding pool; 0 keeps the session in process', () => {
    expect(loadConfig({ EMBEDDING_SESSIONS: '0' }).embedder).toMatchObject({ backend: 'local', sessions: 0 })
    expect(loadConfig({ EMBEDDING_SESSIONS: '3', EMBEDDING_THREADS: '2' }).embedder).toMatchObject({ backend: 'local', sessions: 3, threads: 2 })
    expect(() => loadConfig({ EMBEDDING_SESSIONS: '-1' })).toThrow(/EMBEDDING_SESSIONS=-1/)
    expect(loadConfig({ EMBEDDING_POOL: 'processes' }).embedder).toMatchObject({ backend: 'local', pool: 'processes' })
    expect(() => loadConfig({ EMBEDDING_POOL: 'fibers' })).toThrow(/EMBEDDING_POOL="fibers": must be one of threads \| processes/)
  })

  it('EMBEDDING_SPINNING is on unless set to false', () => {
    expect(loadConfig({}).embedder).toMatchObject({ backend: 'local', spinning: true })
    expect(loadConfig({ EMBEDDING_SPINNING: 'false', EMBEDDING_THREADS: '2' }).embedder).toMatchObject({ backend: 'local', threads: 2, spinning: false })
    expect(() => loadConfig({ EMBEDDING_SPINNING: 'no' })).toThrow(/EMBEDDING_SPINNING="no"/)
  })

  it('EMBEDDING_QUERIES_HERE is off unless set to true', () => {
    expect(loadConfig({}).embedder).toMatchObject({ backend: 'local', queriesHere: false })
    expect(loadConfig({ EMBEDDING_QUERIES_HERE: 'true' }).embedder).toMatchObject({ backend: 'local', queriesHere: true })
    expect(() => loadConfig({ EMBEDDING_QUERIES_HERE: 'yes' })).toThrow(/EMBEDDING_QUERIES_HERE="yes"/)
  })

  it('EMBEDDING_WEIGHTS is shared unless set to copies, and refuses anything else', () => {
    expect(loadConfig({}).embedder).toMatchObject({ backend: 'local', weights: 'shared' })
    expect(loadConfig({ EMBEDDING_WEIGHTS: 'copies' }).embedder).toMatchObject({ backend: 'local', weights: 'copies' })
    expect(() => loadConfig({ EMBEDDING_WEIGHTS: 'one' })).toThrow(/EMBEDDING_WEIGHTS="one"/)
  })

  it.each([
    [{ PORT: 'abc' }, 'PORT="abc": must be an integer'],
    [{ PORT: '70000' }, 'PORT=70000: must be between 0 and 65535'],
    [{ VECTOR_BACKEND: 'faiss' }, 'VECTOR_BACKEND="faiss": must be one of memory | qdrant'],
    [{ EMBEDDER: 'cohere' }, 'EMBEDDER="cohere": must be one of local | openai'],
    [{ DEMO_DATA: 'yes' }, 'DEMO_DATA="yes": must be one of true | false'],
    [{ QDRANT_URL: 'localhost:6333' }, 'QDRANT_URL="localhost:6333": must match ^https?://'],
    [{ VECTOR_BACKEND: 'qdrant' }, 'VECTOR_BACKEND=qdrant needs QDRANT_URL'],
    [{ VECTOR_PRECISION: 'int4' }, 'VECTOR_PRECISION="int4": must be one of float32 | int8'],
    [{ VECTOR_RESCORE_OVERSAMPLE: '0' }, 'VECTOR_RESCORE_OVERSAMPLE=0: must be between 1 and 64'],
    [{ GRAPH_BACKEND: 'neo4j' }, 'GRAPH_BACKEND=neo4j needs NEO4J_URI'],
    [{ EMBEDDER: 'openai', EMBEDDING_MODEL: 'm' }, 'EMBEDDER=openai needs EMBEDDING_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": must be one of fatal | error | warn | info | debug | trace | silent'],
    [{ CHANGE_LOG_MAX_DOCUMENTS: '0' }, 'CHANGE_LOG_MAX_DOCUMENTS=0: must be between 1 and 10000000'],
    [{ CHANGE_LOG_MAX_DOCUMENTS: '100k' }, 'CHANGE_LOG_MAX_DOCUMENTS="100k": must be an integer'],
    [{ CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS: '-5' }, 'CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS=-5: must be between 1 and 100000'],
    [{ CHANGE_LOG_MAX_DOCUMENTS: '1000', CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS: '5000' },
      'CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS=5000 is above CHANGE_LOG_MAX_DOCUMENTS=1000: a log that keeps fewer documents can never list that many changes (set it at most the log\'s length)']
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

  it('reads the change log bounds: 100,000 documents kept per namespace and 2,000 read by id by default', () => {
    const window = { documents: 1_000, documentBytes: 65_536, ttlMs: 60_000 }
    expect(loadConfig({}).replicas.changeLog).toEqual({ maxDocuments: 100_000, maxCatchUpDocuments: 2_000, window })
    expect(loadConfig({ CHANGE_LOG_MAX_DOCUMENTS: '500', CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS: '500' }).replicas.changeLog)
      .toEqual({ maxDocuments: 500, maxCatchUpDocuments: 500, window })
  })

  it('reads the write window\'s bounds: 1,000 documents of at most 64 KiB each for 60 s by default, 0 documents keeps none', () => {
    expect(loadConfig({ CHANGE_LOG_WINDOW_DOCUMENTS: '0', CHANGE_LOG_WINDOW_DOCUMENT_BYTES: '100', CHANGE_LOG_WINDOW_SECONDS: '5' }).replicas.changeLog.window)
      .toEqual({ documents: 0, documentBytes: 100, ttlMs: 5_000 })
    expect(problems({ CHANGE_LOG_WINDOW_SECONDS: '0' })).toHaveLength(1)
  })

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', QDRANT_URL: '' }).port).toBe(3000)
  })

  it('builds the qdrant and openai settings', () => {
    const c = loadConfig({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: 'http://q:6333', QDRANT_API_KEY: 'k',
      EMBEDDER: 'openai', EMBEDDING_URL: 'http://e:8080', EMBEDDING_MODEL: 'bge', EMBEDDING_DIMENSIONS: '512'
    })
    // Qdrant's own defaults on one server: one copy of each shard, a write confirmed by it, a read asking one replica
    expect(c.vector).toEqual({
      backend: 'qdrant', url: 'http://q:6333', apiKey: 'k', cluster: { replicationFactor: 1, writeConsistencyFactor: 1, readConsistency: 1 }
    })
    expect(c.embedder).toEqual({ backend: 'openai', url: 'http://e:8080', model: 'bge', dimensions: 512 })
  })

  it('reads the Qdrant cluster settings, and refuses a write consistency above the replication factor', () => {
    const qdrant = { VECTOR_BACKEND: 'qdrant', QDRANT_URL: 'http://q:6333' }
    const c = loadConfig({ ...qdrant, QDRANT_SHARD_NUMBER: '3', QDRANT_REPLICATION_FACTOR: '2', QDRANT_WRITE_CONSISTENCY_FACTOR: '2', QDRANT_READ_CONSISTENCY: 'majority' })
    expect(c.vector).toMatchObject({ cluster: { shardNumber: 3, replicationFactor: 2, writeConsistencyFactor: 2, readConsistency: 'majority' } })
    expect(loadConfig({ ...qdrant, QDRANT_READ_CONSISTENCY: '2' }).vector).toMatchObject({ cluster: { readConsistency: 2 } })
    expect(() => loadConfig({ ...qdrant, QDRANT_WRITE_CONSISTENCY_FACTOR: '2' })).toThrow(
      'QDRANT_WRITE_CONSISTENCY_FACTOR=2 is above QDRANT_REPLICATION_FACTOR=1')
    expect(() => loadConfig({ ...qdrant, QDRANT_READ_CONSISTENCY: 'most' })).toThrow('QDRANT_READ_CONSISTENCY="most": must match')
    expect(() => loadConfig({ ...qdrant, QDRANT_SHARD_NUMBER: '0' })).toThrow('QDRANT_SHARD_NUMBER=0: must be between 1 and 1024')
  })
})

describe('OCR settings', () => {
  it('OCR_PICTURES turns the pictures\' OCR off; OCR_SLOTS_DIR names the folder every process shares, the temporary folder\'s by default', () => {
    expect(loadConfig({}).ocr).toMatchObject({ pictures: true, slotsDir: join(tmpdir(), 'recall-ocr-slots') })
    expect(loadConfig({ OCR_PICTURES: 'false', OCR_SLOTS_DIR: '/run/recall/ocr' }).ocr).toMatchObject({ pictures: false, slotsDir: '/run/recall/ocr' })
    expect(() => loadConfig({ OCR_PICTURES: 'no' })).toThrow('OCR_PICTURES="no"')
  })
})

describe('the defaults written in the config schema', () => {
  // The schema's `default` is what docs/configuration.md publishes: setting a variable to it must change nothing.
  const documented = Object.entries(EnvSchema.properties as Record<string, { default?: string | number }>)
    .filter(([, s]) => s.default !== undefined)
  it('are given for every variable but those that are off when unset or whose default is derived', () => {
    expect(Object.keys(EnvSchema.properties).filter((name) => !documented.some(([n]) => n === name)).sort()).toEqual([
      'API_KEYS', 'CORS_ORIGINS', 'DERIVATION_DICTIONARY', 'EMBEDDING_API_KEY', 'EMBEDDING_DIMENSIONS', 'EMBEDDING_SESSIONS', 'EMBEDDING_URL', 'FAILPOINTS', 'FOLD_THREADS', 'GRAPH_THREAD', 'LEXICAL_BACKEND', 'LEXICAL_STEMMING',
      'LLM_API_KEY', 'LLM_MODEL', 'LLM_SYSTEM_PROMPT_FILE', 'LLM_URL', 'LLM_USER_PROMPT_FILE', 'MAX_EMBEDDING_WAIT_MS', 'MEMORY_LIMIT',
      'NEO4J_DATABASE', 'NEO4J_URI', 'OCR_CONCURRENCY', 'OCR_SLOTS_DIR', 'QDRANT_API_KEY', 'QDRANT_SHARD_NUMBER', 'QDRANT_URL', 'REDIS_URL', 'REDIS_WAIT_REPLICAS'
    ])
  })
  it.each(documented)('%s', (name, schema) => {
    expect(loadConfig({ [name]: String(schema.default) })).toEqual(loadConfig({}))
    // the Qdrant settings only show with Qdrant
    const qdrant = { VECTOR_BACKEND: 'qdrant', QDRANT_URL: 'http://q:6333' }
    if (name !== 'VECTOR_BACKEND') expect(loadConfig({ ...qdrant, [name]: String(schema.default) })).toEqual(loadConfig(qdrant))
  })
})

describe('a bad variable at start-up', () => {
  it('stops the server before anything starts, exit code 1, with the variable, its value and what it must be', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/http/server.ts'], {
      env: { ...process.env, DEMO_DATA: 'false', CHANGE_LOG_MAX_DOCUMENTS: '0', PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe']
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const [code] = (await once(child, 'close')) as [number | null]
    expect(code, stderr).toBe(1)
    expect(stderr).toContain('recall: invalid configuration:\n  - CHANGE_LOG_MAX_DOCUMENTS=0: must be between 1 and 10000000\n')
  })
})

describe('EMBEDDING_MODEL', () => {
  it('runs bge-small-zh-v1.5 unless told, with the collections every earlier deployment has', () => {
    const c = loadConfig({})
    expect(c.embedder.model).toBe('bge-small-zh-v1.5')
    expect(c.collectionPrefix).toBe('recall_')
    expect(c.namespaceModels).toEqual({ records: 'recall_namespace_models' })
  })

  it('bge-small-en-v1.5 gets collections of its own (another width), beside the shared record of namespace models', () => {
    const c = loadConfig({ EMBEDDING_MODEL: 'bge-small-en-v1.5', COLLECTION_PREFIX: 'x_' })
    expect(c.embedder).toMatchObject({ backend: 'local', model: 'bge-small-en-v1.5' })
    expect(c.collectionPrefix).toBe('x_bge_small_en_v1_5_')
    expect(c.namespaceModels).toEqual({ records: 'x_namespace_models', legacy: { model: 'bge-small-zh-v1.5', collections: ['x_chunks', 'x_Episode_summary'] } })
  })

  it('refuses a local model it does not know, naming the value and the ones it knows', () => {
    expect(() => loadConfig({ EMBEDDING_MODEL: 'bge-small-fr' })).toThrow(/EMBEDDING_MODEL=bge-small-fr is not a local model: use bge-small-zh-v1.5 or bge-small-en-v1.5/)
    const remote = loadConfig({ EMBEDDER: 'openai', EMBEDDING_URL: 'http://127.0.0.1:1', EMBEDDING_MODEL: 'bge-small-fr' })
    expect(remote.embedder.model).toBe('bge-small-fr')
    // a remote model keeps the collections it always had
    expect(remote.collectionPrefix).toBe('recall_')
  })
})

describe('LEXICAL_STEMMING', () => {
  it('is on with the English model and off with the Chinese one unless told, each model with its own lexical folders', () => {
    expect(loadConfig({}).lexical).toMatchObject({ analyzer: 'cjk-bigram', folderSuffix: '' })
    expect(loadConfig({ EMBEDDING_MODEL: 'bge-small-en-v1.5' }).lexical).toMatchObject({ analyzer: 'cjk-bigram-english', folderSuffix: '-bge_small_en_v1_5' })
    expect(loadConfig({ EMBEDDING_MODEL: 'bge-small-en-v1.5', LEXICAL_STEMMING: 'false' }).lexical.analyzer).toBe('cjk-bigram')
    expect(loadConfig({ LEXICAL_STEMMING: 'true' }).lexical.analyzer).toBe('cjk-bigram-english')
  })
})
