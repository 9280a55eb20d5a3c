import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'

const BackendHealthSchema = Type.Object({
  backend: Type.String({ description: 'Role and kind: `vector-store:qdrant`, `cache:memory`, `knowledge-graph:neo4j`, …' }),
  ok: Type.Boolean(),
  latency_ms: Type.Number(),
  detail: Type.Optional(Type.String())
})

const StartupSchema = Type.Object({
  done: Type.Boolean({ description: 'Every start-up step has succeeded' }),
  steps: Type.Array(Type.Object({
    name: Type.String({ description: '`sole-writer`, `redis:replicas` (Redis can confirm writes as `REDIS_WAIT_REPLICAS` asks), `embedder`, `documents`, `knowledge-graph`, `demo:graph`, `demo:episodes`, `demo:documents`, `graphrag:names`, `episodic:stores` (the embedded stores episodic reads)' }),
    state: Type.Union([Type.Literal('pending'), Type.Literal('running'), Type.Literal('done'), Type.Literal('retrying')]),
    detail: Type.String({ description: 'What it does, how far it got, or why its last attempt failed' }),
    attempts: Type.Integer(),
    retry_in_ms: Type.Optional(Type.Integer({ description: 'When a failed step is tried again' }))
  }))
}, { description: 'The start-up work: the service listens at once and loads the model, the stores and the demo world meanwhile' })

const Bytes = Type.Integer({ minimum: 0 })
const MemorySchema = Type.Object({
  limit_bytes: { ...Bytes, description: 'The resident memory the process may hold' },
  limit_source: Type.Union([Type.Literal('MEMORY_LIMIT'), Type.Literal('cgroup'), Type.Literal('machine')], { description: '`MEMORY_LIMIT`, else the container\'s cgroup limit, else 75% of the machine\'s memory' }),
  rss_bytes: { ...Bytes, description: 'Resident memory now' },
  heap_headroom_bytes: { ...Bytes, description: 'What the JavaScript heap may still take before V8\'s next full collection (what the last one kept, grown by the growing percentage then, less the pages it holds now), counted with `rss_bytes`; 0 when V8 picks its growth itself (not started by `npm start`)' },
  heap_growing_percent: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'V8\'s heap growth from the next full collection on, as a percentage of what it keeps: 50 as `npm start` sets it, down to 10 as the room under `rss_refuse_at_bytes` shrinks; null when V8 picks its own' }),
  fold_heaps_reserved_bytes: { ...Bytes, description: 'The heap limits of the graphs\' fold threads running, counted with `rss_bytes` until they end (a fold\'s heap may still grow to its limit)' },
  rss_refuse_at_bytes: { ...Bytes, description: 'Writes that add are refused once resident memory, the heap\'s headroom and the folds\' reserved heaps reach this (90% of the limit)' },
  heap_used_bytes: { ...Bytes, description: 'JavaScript heap the last full collection kept (or less, when the heap is smaller now)' },
  heap_limit_bytes: { ...Bytes, description: 'V8\'s heap limit in this process (`npm start` sets it to 75% of the limit)' },
  heap_refuse_at_bytes: { ...Bytes, description: 'Writes that add are refused from this heap size on (85% of the heap limit)' },
  refusing_writes: Type.Boolean({ description: 'Document, graph and Episode ingests answer 507 `RECALL_MEMORY_BUDGET` now; reads, deletes and drops go on (readiness is not affected)' }),
  refused_writes: { ...Bytes, description: 'Writes refused since start' },
  fold_waits: { ...Bytes, description: 'Writes over the resident mark that first waited (at most 3 min) for the graphs\' fold threads running to end, as their heaps are given back then; taken if that made the room' },
  release: Type.Object({
    releases: { ...Bytes, description: 'Heap releases run since start (`MEMORY_RELEASE_AFTER_MS`)' },
    for_room: { ...Bytes, description: 'Of `releases`, those run for a write that would have been refused: resident memory less what a release was predicted to give back was under `rss_refuse_at_bytes`, and none had run for `MEMORY_RELEASE_INTERVAL_MS`; the write waited for it, and was taken if it made the room' },
    skipped: { ...Bytes, description: 'Quiet times that ran no heap release: predicted to give back less than `min_gain_bytes`, or the heap in use above `max_heap_bytes`' },
    skipped_heap: { ...Bytes, description: 'Of `skipped`, those skipped because the heap in use was above `max_heap_bytes`' },
    predicted_gain_bytes: { ...Bytes, description: 'What a release was predicted to give back at the last quiet time (or, after a release, what it left): V8\'s pages beyond its heap (its page pool) and its committed but unused heap (0 before the first)' },
    min_gain_bytes: { ...Bytes, description: 'A release runs only when predicted to give back this much: the largest of `MEMORY_RELEASE_MIN_GAIN`, 2% of the limit and a quarter of the heap in use (as of the last quiet time)' },
    max_heap_bytes: { ...Bytes, description: 'No release runs while the heap in use is above this (`MEMORY_RELEASE_MAX_HEAP`): its pause grows with the heap' },
    last: Type.Union([Type.Object({
      at: Type.String({ description: 'When it ended' }),
      ms: { ...Bytes, description: 'How long it paused the whole process, reads included (ms)' },
      rss_before_bytes: Bytes,
      rss_after_bytes: Bytes,
      predicted_gain_bytes: Bytes,
      heap_used_bytes: { ...Bytes, description: 'The heap in use before it, which it marked' }
    }), Type.Null()], { description: 'The last release, or null before the first' })
  }, { description: 'The release of the pages an ingest left resident once writes are quiet (docs/operations.md, "Memory budget")' })
}, { description: 'The memory budget in use (`MEMORY_LIMIT`, docs/operations.md "Memory budget")' })

const ReadinessSchema = Type.Object({ ready: Type.Boolean(), backends: Type.Array(BackendHealthSchema), startup: StartupSchema, memory: MemorySchema })

const example = {
  ready: false,
  memory: {
    limit_bytes: 6442450944, limit_source: 'MEMORY_LIMIT', rss_bytes: 412090368, heap_headroom_bytes: 31457280, heap_growing_percent: 50, fold_heaps_reserved_bytes: 0, rss_refuse_at_bytes: 5798205849,
    heap_used_bytes: 98566144, heap_limit_bytes: 4882169856, heap_refuse_at_bytes: 4149844377, refusing_writes: false, refused_writes: 0, fold_waits: 0,
    release: { releases: 1, for_room: 0, skipped: 0, skipped_heap: 0, predicted_gain_bytes: 3145728, min_gain_bytes: 128849018, max_heap_bytes: 536870912, last: { at: '2026-12-05T20:31:02.114Z', ms: 243, rss_before_bytes: 1245708288, rss_after_bytes: 641728512, predicted_gain_bytes: 598736896, heap_used_bytes: 178257920 } }
  },
  backends: [{ backend: 'embedder:local', ok: false, latency_ms: 0.1, detail: 'the model is still loading' }],
  startup: {
    done: false,
    steps: [
      { name: 'embedder', state: 'running', detail: 'loading the embedding model', attempts: 1 },
      { name: 'demo:documents', state: 'running', detail: 'loading the demo corpus: 96 of 341 chunks embedded', attempts: 1 }
    ]
  }
}

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      summary: 'The process is alive',
      response: { 200: { ...Type.Object({ status: Type.Literal('ok') }), description: 'Alive' } }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      summary: 'Start-up is over and every configured backend is reachable',
      response: {
        200: { ...ReadinessSchema, description: 'Started, and all backends answer' },
        503: { ...ReadinessSchema, description: 'Still starting (the steps say what it waits for and how far it got), or a backend does not answer', example }
      }
    }
  }, async (_request, reply) => {
    const [backends, startup] = [await app.runtime.health(), app.runtime.startup.report()]
    const ready = startup.done && backends.every((b) => b.ok)
    return reply.code(ready ? 200 : 503).send({ ready, backends, startup, memory: app.runtime.memory() })
  })
}

export default healthRoutes
