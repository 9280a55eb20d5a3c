import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PictureLimits } from './corpus/images/pictures.js'
import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { isNamespace, NAMESPACE_PATTERN } from './providers/namespace.js'
import { DEFAULT_MODEL, LOCAL_MODELS, collectionPart, isLocalModel } from './providers/embedder/models.js'
import type { ServiceAnalyzer } from './kernel/analyzers.js'
import { clusterAddress, sentinelAddress, type ReplicaAcknowledgement } from './providers/redis-client.js'
import type { QdrantClusterSettings, QdrantReadConsistency } from './providers/vector-store/qdrant-cluster.js'
import { memoryLimit, MEMORY_LIMIT_PATTERN, parseMemoryLimit, type MemoryLimit } from './memory/limit.js'

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false')])
const Port = Type.Integer({ minimum: 0, maximum: 65535 })
const Millis = Type.Integer({ minimum: 1, maximum: 600_000 })

/** A key that may use only some namespaces. */
export interface ScopedApiKey {
  key: string
  /** The namespaces it may read and write; absent: every namespace. */
  namespaces?: readonly string[]
}

/** A variable's schema with its documentation: `description`, and `default` when the default is a fixed value. */
const env = <T extends TSchema>(schema: T, doc: { description: string; default?: string | number }) =>
  Type.Optional({ ...schema, ...doc } as T)

/**
 * Every environment variable the service reads, with its meaning and embedded default (the value used when
 * the variable is unset; `test/config.test.ts` checks that setting it to that value changes nothing).
 * `docs/configuration.md` is generated from it (`make config-doc`); `.env.example` lists the same names.
 */
export const EnvSchema = Type.Object({
  PORT: env(Port, { description: 'HTTP port.', default: 3000 }),
  HOST: env(Type.String({ minLength: 1 }), { description: 'Listen address (`0.0.0.0` in containers).', default: '127.0.0.1' }),
  LOG_LEVEL: env(Type.Union([
    Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'),
    Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')
  ]), { description: 'Pino log level.', default: 'info' }),
  DATA_DIR: env(Type.String({ minLength: 1 }), { description: 'Where the embedded stores and the BM25 index persist.', default: './data' }),
  DEMO_DATA: env(Bool, { description: '`true` loads the demo world (`demo/`) into the stores that are empty; `false` never.', default: 'true' }),
  VECTOR_BACKEND: env(Type.Union([Type.Literal('memory'), Type.Literal('qdrant')]), { description: '`memory` (embedded, exact cosine, persisted under `DATA_DIR`) or `qdrant`.', default: 'memory' }),
  VECTOR_PRECISION: env(Type.Union([Type.Literal('float32'), Type.Literal('int8')]), { description: 'With `VECTOR_BACKEND=memory`: how vectors are held for the scan. `int8` (the default) holds each vector in a quarter of the memory (one byte a dimension and a scale) and keeps the float32 vectors in a file of the process under `DATA_DIR/vectors` (page cache, not resident), reading them back to score the `VECTOR_RESCORE_OVERSAMPLE` × limit best int8 candidates exactly: scores are float32\'s, and the answer is float32\'s whenever its hits are among the candidates, which every measured query was (docs/operations.md, "int8 vectors"). `float32` scans the float32 vectors held in memory (exact by construction, four times the memory). The files on disk hold float32 either way, so the setting can change between starts. Qdrant keeps float32 vectors whatever it says.', default: 'int8' }),
  VECTOR_RESCORE_OVERSAMPLE: env(Type.Integer({ minimum: 1, maximum: 64 }), { description: 'With `VECTOR_PRECISION=int8`: candidates the int8 scan keeps for each hit asked, all scored again with their float32 vectors.', default: 4 }),
  QDRANT_URL: env(Type.String({ pattern: '^https?://' }), { description: 'Qdrant\'s URL, e.g. `http://localhost:6333`; required with `VECTOR_BACKEND=qdrant`.' }),
  QDRANT_API_KEY: env(Type.String(), { description: 'Qdrant API key, if the server wants one.' }),
  QDRANT_SHARD_NUMBER: env(Type.Integer({ minimum: 1, maximum: 1024 }), { description: 'Shards of each collection recall creates on Qdrant; unset leaves it to the server (one per node of the cluster at creation, 1 on one server). An existing collection with another number stops start-up (docs/deployment.md).' }),
  QDRANT_REPLICATION_FACTOR: env(Type.Integer({ minimum: 1, maximum: 64 }), { description: 'Copies of each shard of the collections recall creates: 2 or more keeps every point readable and writable while one Qdrant node is down (docs/deployment.md). An existing collection with another factor stops start-up.', default: 1 }),
  QDRANT_WRITE_CONSISTENCY_FACTOR: env(Type.Integer({ minimum: 1, maximum: 64 }), { description: 'Replicas of a shard that must confirm a write before Qdrant acknowledges it; at most `QDRANT_REPLICATION_FACTOR`. An existing collection with another factor stops start-up.', default: 1 }),
  QDRANT_READ_CONSISTENCY: env(Type.String({ pattern: '^([1-9][0-9]?|majority|quorum|all)$' }), { description: 'Replicas of each shard a Qdrant read asks (`consistency`): a number, `majority`, `quorum` or `all`; `1` asks one, as Qdrant does unless told (docs/deployment.md).', default: '1' }),
  COLLECTION_PREFIX: env(Type.String({ pattern: '^[A-Za-z0-9_-]*$' }), { description: 'Prefix of every vector collection name.', default: 'recall_' }),
  LEXICAL_BACKEND: env(Type.Union([Type.Literal('embedded'), Type.Literal('qdrant')]), { description: '`embedded` (BM25 in process, under `DATA_DIR/bm25`) or `qdrant` (BM25 in the chunk points, exact per namespace for any number of replicas: docs/scale-out.md). Unset: `qdrant` with `VECTOR_BACKEND=qdrant`, else `embedded`.' }),
  LEXICAL_STEMMING: env(Bool, { description: '`true` brings English words to their Porter2 stem in the lexical index of chunks (`paintings`, `painted` → `paint`; CJK text unchanged); unset: on with `EMBEDDING_MODEL=bge-small-en-v1.5`, off otherwise. Changing it re-indexes (docs/lexical-index.md, "English words").' }),
  LEXICAL_LOCAL_COPY: env(Bool, { description: 'With `LEXICAL_BACKEND=qdrant`: `true` keeps a copy of each namespace\'s postings in this process (files under `DATA_DIR/bm25-copy`, a cache) and searches it while it is proven current, at the embedded index\'s speed; `false` ranks every search on Qdrant (no memory per replica). docs/scale-out.md, "The local copy".', default: 'true' }),
  GRAPH_BACKEND: env(Type.Union([Type.Literal('memory'), Type.Literal('neo4j')]), { description: '`memory` (embedded, persisted) or `neo4j`, for the knowledge graph and the episodic graph.', default: 'memory' }),
  GRAPH_THREAD: env(Bool, { description: '`true`: the embedded knowledge graph (`GRAPH_BACKEND=memory`) lives in a thread of its own, so its load at start-up and its reads and writes run on another core than the event loop\'s (docs/operations.md, "Listen first"); `false`: in the event loop\'s thread. Unset: `true` when this process may use more than one core (`os.availableParallelism()`) and memory has no budget of its own (neither `MEMORY_LIMIT` nor a container\'s limit), else `false`: the thread took a 1M start-up to 0.77x, but under `MEMORY_LIMIT=6GiB` an ingest with it was refused at 426,800 chunks against 535,600 without (one run each; a second heap\'s headroom and copies), and on one core it only costs. Not read with `neo4j`.' }),
  EPISODIC_THREAD: env(Bool, { description: '`true`: the embedded episodic graph (`GRAPH_BACKEND=memory`) lives in a thread of its own, as `GRAPH_THREAD` does for the knowledge graph; `false`: in the event loop\'s thread. Measured at 1M chunks: a start-up 0.94x the time but its peak resident +0.7–0.8 GiB (the thread\'s own heap headroom), and an episodic question +3–6 ms (1.19–1.32x the search at 1k–10k Episodes: each graph read\'s answer cloned across) (bench/results/memory.log.md, "The episodic graph in a thread of its own"). Not read with `neo4j`.', default: 'false' }),
  FOLD_THREADS: env(Type.Integer({ minimum: 0, maximum: 64 }), { description: 'Fold threads at once in this process (`GRAPH_BACKEND=memory`): each embedded graph folds its log into its snapshot in a thread of its own, which at 1M chunks holds ~0.5 GiB for the knowledge graph; a fold past the limit waits its turn (writes go on meanwhile). `0`: any number. Unset: `1` when memory has a budget of its own (`MEMORY_LIMIT` or a container\'s limit), else `0` (bench/results/memory.log.md, "Fold threads one at a time under a budget"). Not read with `neo4j`.' }),
  NEO4J_URI: env(Type.String({ pattern: '^(bolt|neo4j)(\\+s|\\+ssc)?://' }), { description: 'Bolt URI, e.g. `bolt://127.0.0.1:7687`; required with `GRAPH_BACKEND=neo4j`.' }),
  NEO4J_USER: env(Type.String(), { description: 'Neo4j user.', default: 'neo4j' }),
  NEO4J_PASSWORD: env(Type.String(), { description: 'Neo4j password.', default: '' }),
  NEO4J_DATABASE: env(Type.String(), { description: 'Neo4j database; unset uses the server\'s default.' }),
  EMBEDDER: env(Type.Union([Type.Literal('local'), Type.Literal('openai')]), { description: '`local` (`EMBEDDING_MODEL` on this machine, in `EMBEDDING_SESSIONS` sessions) or `openai` (any OpenAI-compatible `/v1/embeddings`).', default: 'local' }),
  MODEL_DIR: env(Type.String({ minLength: 1 }), { description: 'Folder holding `bge-small-zh-v1.5/` and `bge-small-en-v1.5/` (`make model` fills it).', default: './models' }),
  EMBEDDING_THREADS: env(Type.Integer({ minimum: 1, maximum: 64 }), { description: 'ONNX Runtime threads of the local model; one is faster on a busy machine, where a second thread waits for a core at every operator.', default: 1 }),
  EMBEDDING_SPINNING: env(Bool, { description: 'With `EMBEDDING_THREADS` of 2 or more: `false` puts ONNX Runtime\'s waiting intra-op threads to sleep instead of spinning (one session of 2 threads spent 2.1x the CPU a query spinning, at 16 callers and load 17–21); no effect with 1 thread (bench/results/concurrency.log.md, "One session of two threads").', default: 'true' }),
  EMBEDDING_SESSIONS: env(Type.Integer({ minimum: 0, maximum: 64 }), { description: 'ONNX sessions of the local model, each in a worker thread or a process of its own (`EMBEDDING_POOL`) with `EMBEDDING_THREADS` threads, taking query and passage embeddings from one queue; `0` runs one session in the service\'s own thread, holding its event loop during each run. Unset: the number of cores this process may use (`os.availableParallelism()`), or 0 on one core (bench/results/concurrency.log.md).' }),
  EMBEDDING_POOL: env(Type.Union([Type.Literal('threads'), Type.Literal('processes')]), { description: 'Where the `EMBEDDING_SESSIONS` run: `threads`, worker threads of the service\'s process sharing one runtime library (see `EMBEDDING_QUERIES_HERE`); `processes`, child processes with a runtime and model each, plus one session in the service\'s own process that takes a run only when it is alone (bench/results/concurrency.log.md, "The embedding pool and why threads").', default: 'threads' }),
  EMBEDDING_QUERIES_HERE: env(Bool, { description: 'With `EMBEDDING_POOL=threads` and 2 sessions or more: `true` loads one more session in the service\'s own thread, which takes a short query (160 characters at most) only when the session threads have no room for it, and keeps the last thread for passages, so that queries keep two threads busy rather than three; `false` leaves every run to the threads. Off until measured on a quiet machine (bench/results/concurrency.log.md, "A session on the main thread").', default: 'false' }),
  EMBEDDING_WEIGHTS: env(Type.Union([Type.Literal('shared'), Type.Literal('copies')]), { description: 'With two local sessions or more: `shared` writes once, under `DATA_DIR/embedding-weights`, a copy of the model whose packed weights every session maps from one file (one copy in memory and in the processor\'s cache, the same vectors); `copies` lets each session pack its own, as before. A copy that cannot be written or does not load falls back to `copies` and `/readyz` says why; one whose bytes changed on disk is written again (bench/results/concurrency.log.md, "One copy of the weights").', default: 'shared' }),
  EMBEDDING_URL: env(Type.String({ pattern: '^https?://' }), { description: 'Base URL of the OpenAI-compatible server (OpenAI, TEI, Ollama, vLLM); required with `EMBEDDER=openai`.' }),
  EMBEDDING_MODEL: env(Type.String({ minLength: 1 }), { description: 'With `EMBEDDER=local`: `bge-small-zh-v1.5` (Chinese) or `bge-small-en-v1.5` (English; its namespaces\' lexical index stems English words). With `EMBEDDER=openai`: the model name sent to that server (required). Each namespace records the model its vectors were made with and refuses another (docs/namespaces.md, "The embedding model of a namespace").', default: 'bge-small-zh-v1.5' }),
  EMBEDDING_API_KEY: env(Type.String(), { description: 'Bearer key for that server.' }),
  EMBEDDING_DIMENSIONS: env(Type.Integer({ minimum: 1, maximum: 8192 }), { description: 'Vector width of the remote model, when it is not 512; unset takes the model\'s.' }),
  MAX_QUERY_CHARS: env(Type.Integer({ minimum: 1, maximum: 100_000 }), { description: 'Longest accepted question, in characters.', default: 2000 }),
  BODY_LIMIT_BYTES: env(Type.Integer({ minimum: 1024 }), { description: 'Largest request body in bytes; a larger one answers 413.', default: 10485760 }),
  INGEST_JOB_BODY_BYTES: env(Type.Integer({ minimum: 0 }), { description: 'A `POST /ingest/documents` body larger than this (bytes) runs as a job (202, `GET /ingest/jobs/{id}`) unless it says `wait=true`; a smaller one answers when written, as before. `wait=false` makes any body a job.', default: 1048576 }),
  INGEST_FILE_MAX_BYTES: env(Type.Integer({ minimum: 1 }), { description: 'Largest file `POST /ingest/files` takes (bytes); a larger one answers 413 naming the file, and nothing of the request is written.', default: 104857600 }),
  INGEST_FILES_MAX_BYTES: env(Type.Integer({ minimum: 1 }), { description: 'Largest sum of the files of one `POST /ingest/files` (bytes); past it the request answers 413 and nothing is written. The files are kept on disk (the system\'s temporary folder) until their job ends.', default: 524288000 }),
  INGEST_FILES_MAX_COUNT: env(Type.Integer({ minimum: 1, maximum: 100_000 }), { description: 'Most files one `POST /ingest/files` may send; more answers 413.', default: 1000 }),
  OCR_LANGUAGES: env(Type.String({ pattern: '^[a-z_]+(\\+[a-z_]+)*$' }), { description: 'Tesseract languages a page without text and an image file are recognised in, joined by `+` (each needs its Debian package `tesseract-ocr-<lang>`: docs/formats.md, "OCR").', default: 'chi_sim+eng' }),
  OCR_CONCURRENCY: env(Type.Integer({ minimum: 1, maximum: 64 }), { description: 'Recognitions (pages, image files, pictures) at once on this machine, across every recall process that shares `OCR_SLOTS_DIR`, each in a `tesseract` process of one thread (so, cores taken by OCR). Unset: half the cores this process may use, at least 1.' }),
  OCR_PAGE_TIMEOUT_MS: env(Millis, { description: 'Longest one page\'s recognition may take; a page over it is reported failed with its reason and the rest of the file is still read.', default: 120000 }),
  OCR_DPI: env(Type.Integer({ minimum: 72, maximum: 600 }), { description: 'Resolution a PDF page without text is rendered at (poppler) for recognition.', default: 150 }),
  OCR_MIN_CONFIDENCE: env(Type.Number({ minimum: 0, maximum: 1 }), { description: 'Mean confidence (0 to 1) below which an OCR\'d page is kept but flagged: named in `metadata.ocr_low_confidence_pages` and in the file\'s report.', default: 0.6 }),
  OCR_SLOTS_DIR: env(Type.String({ minLength: 1 }), { description: 'Folder of the OCR slot locks every recall process on this machine shares, so that `OCR_CONCURRENCY` recognitions run at once on the machine, not per process (each slot an exclusive `flock` on `slot-<n>`, dropped by the kernel when its holder exits: docs/formats.md, "OCR"). Processes that should share the bound name the same folder (replicas in containers: a shared volume). Unset: `recall-ocr-slots` in the system\'s temporary folder.' }),
  OCR_PICTURES: env(Bool, { description: '`true` recognises the text of the pictures in PDF, DOCX, HTML and Markdown files (each picture\'s `ocr_text`, one recognition each); `false` keeps their alt text and caption only. Scanned pages and image files are recognised either way.', default: 'true' }),
  OCR_MAX_IMAGE_PIXELS: env(Type.Integer({ minimum: 1 }), { description: 'Largest image (width × height) recognised, read from its header before decoding; a larger one (an image bomb) is refused with its reason. A PDF page is checked at `OCR_DPI` before rendering.', default: 100000000 }),
  INGEST_JOB_BATCH_CHUNKS: env(Type.Integer({ minimum: 1, maximum: 100_000 }), { description: 'An ingest job writes its documents in batches of about this many chunks (whole documents, at least one), one write each: a cancel takes effect after the batch in flight.', default: 64 }),
  EVAL_MAX_QUESTIONS: env(Type.Integer({ minimum: 1, maximum: 1_000_000 }), { description: 'Most questions a judged set sent to `POST /evaluate` may hold; more is a 413 naming the bound.', default: 5000 }),
  EVAL_TIMEOUT_SECONDS: env(Type.Integer({ minimum: 1, maximum: 86_400 }), { description: 'Longest an evaluation may run (s) before it fails (a job) or answers 504.', default: 1800 }),
  VECTOR_TIMEOUT_MS: env(Millis, { description: 'Vector-search timeout (ms).', default: 1500 }),
  LEXICAL_TIMEOUT_MS: env(Millis, { description: 'BM25 timeout (ms).', default: 1000 }),
  EMBEDDING_TIMEOUT_MS: env(Millis, { description: 'Query-embedding timeout (ms).', default: 2000 }),
  GRAPH_TIMEOUT_MS: env(Millis, { description: 'Graph-store read timeout (ms).', default: 2000 }),
  VECTOR_WRITE_TIMEOUT_MS: env(Millis, { description: 'Vector-store write timeout (ms): collections, upserts and deletes of documents and Episodes.', default: 60000 }),
  GRAPH_WRITE_TIMEOUT_MS: env(Millis, { description: 'Neo4j write timeout (ms): knowledge-graph and episodic imports and deletes, schema set-up.', default: 60000 }),
  EMBEDDING_WRITE_TIMEOUT_MS: env(Millis, { description: 'Remote embedder timeout (ms) for passages at ingestion (one batch of 64).', default: 60000 }),
  IMAGE_MIN_SIDE_PX: env(Type.Integer({ minimum: 0, maximum: 10_000 }), { description: 'A document\'s picture narrower or lower than this (pixels) is decorative (an icon, a spacer): not stored, counted in the write\'s `images.small` (docs/formats.md, "Pictures").', default: 32 }),
  IMAGE_MIN_BYTES: env(Type.Integer({ minimum: 0, maximum: 1_048_576 }), { description: 'A document\'s picture of fewer bytes than this is decorative too: not stored, counted in `images.small`.', default: 200 }),
  IMAGE_MAX_STORED_BYTES: env(Type.Integer({ minimum: 1024, maximum: 8_388_608 }), { description: 'A picture larger than this (bytes) is stored as a WebP thumbnail of at most this size, made smaller until it fits; `GET /images/{id}` serves what is stored.', default: 262144 }),
  REDIS_URL: env(Type.String({ pattern: '^rediss?(\\+cluster|\\+sentinel)?://' }), { description: '`redis://host:6379` (one server), `redis+cluster://host1:6379,host2:6379` (a Redis Cluster: any of its nodes, the rest are discovered) or `redis+sentinel://host1:26379,host2:26379/mymaster` (the master the Sentinels name; `rediss://`, `rediss+cluster://`, `rediss+sentinel://` for TLS): a shared cache and rate-limit counters, and with several replicas the generations, the change log and the write lock; unset uses an in-process LRU (docs/deployment.md#redis).' }),
  REDIS_COMMAND_TIMEOUT_MS: env(Millis, { description: 'Redis command timeout (ms): a cache round trip must cost less than the work it saves.', default: 50 }),
  REDIS_WAIT_REPLICAS: env(Type.Integer({ minimum: 0, maximum: 64 }), { description: 'Replicas of its master that must confirm (Redis `WAIT`) a write lock taken and a generation recorded before they count, so that a failover cannot repeat a generation or hand a lock to a second writer; unconfirmed, a lock is given back (the write answers 503) and a record is made again (the write answers without `generation` if it stays unconfirmed). Unset: 1 with `redis+cluster://` and `redis+sentinel://`, 0 (no `WAIT`) with `redis://`; set 0 for a cluster with no replicas (docs/deployment.md#redis). Checked at start-up and at every `/readyz` against the replicas each master has online: fewer keep the service from becoming ready (step `redis:replicas`, entry `write-confirmation:redis`), naming both numbers and the two fixes (docs/scale-out.md, "Start-up checks of a cluster").' }),
  REDIS_WAIT_TIMEOUT_MS: env(Millis, { description: 'Longest wait (ms) for the replicas `REDIS_WAIT_REPLICAS` asks for.', default: 1000 }),
  REDIS_RECORD_RETRY_MS: env(Type.Integer({ minimum: 0, maximum: 600_000 }), { description: 'With `REDIS_WAIT_REPLICAS` above 0: how long (ms) a write keeps trying to record itself (its generation confirmed by the replicas) before it answers 200 without `generation`, so that a write under way when its master fails is recorded once a replica took over and has a replica of its own again (cluster-node-timeout, about a second, and the old master\'s return). With `REDIS_WAIT_REPLICAS=0`, three attempts within a few hundred ms, as always.', default: 20000 }),
  REDIS_UNTAGGED_WRITE_LOCK: env(Bool, { description: 'On a Redis Cluster, also take each write lock under its key of recall before the namespace hash tag (`recall:write-lock:<kind>:<ns>`, first and without `WAIT`) beside the tagged one (`…:{<ns>}`), so that replicas of both versions running side by side during an upgrade exclude each other; set `false` once no replica older than this version runs, and a write no longer needs the untagged key\'s master. Nothing changes on one server or under Sentinel (both names are one key) (docs/deployment.md#redis).', default: 'true' }),
  CACHE_TTL_SECONDS: env(Type.Integer({ minimum: 0, maximum: 31_536_000 }), { description: 'Response cache TTL (s); `0` turns it off.', default: 300 }),
  EMBEDDING_CACHE_TTL_SECONDS: env(Type.Integer({ minimum: 0, maximum: 31_536_000 }), { description: 'Query-embedding cache TTL (s); `0` turns it off.', default: 86400 }),
  CACHE_MAX_ENTRIES: env(Type.Integer({ minimum: 1, maximum: 10_000_000 }), { description: 'Size of the in-process LRU.', default: 10000 }),
  API_KEYS: env(Type.String({ pattern: '^[^,\\s]+(,[^,\\s]+)*$' }), { description: 'Comma-separated entries `key` (every namespace) or `key=ns1|ns2` (only those); when set, writes need a key.' }),
  READ_API_KEYS_REQUIRED: env(Bool, { description: '`true`: reads need a key too (needs `API_KEYS`).', default: 'false' }),
  RATE_LIMIT_MAX: env(Type.Integer({ minimum: 0 }), { description: 'Requests per key (or IP) per window; `0` turns rate limiting off.', default: 1200 }),
  RATE_LIMIT_WINDOW_MS: env(Millis, { description: 'Rate-limit window (ms).', default: 60000 }),
  CORS_ORIGINS: env(Type.String(), { description: 'Comma-separated origins, `*` for any; unset sends no CORS headers.' }),
  TRUST_PROXY: env(Bool, { description: '`true` behind a load balancer (client IPs from `X-Forwarded-For`).', default: 'false' }),
  MAX_IN_FLIGHT: env(Type.Integer({ minimum: 0 }), { description: 'Requests answered at once (probes and scrapes aside) past which new ones get 503; `0` off.', default: 512 }),
  MAX_EMBEDDING_QUEUE: env(Type.Integer({ minimum: 0 }), { description: 'Query embeddings waiting for the local model past which a request that embeds gets 503; `0` off.', default: 256 }),
  MAX_EMBEDDING_WAIT_MS: env(Type.Integer({ minimum: 0, maximum: 600_000 }), { description: 'Expected wait (ms) of a new query embedding past which a request that embeds gets 503; `0` off. Unset: half of `EMBEDDING_TIMEOUT_MS`.' }),
  MAX_EVENT_LOOP_DELAY_MS: env(Type.Integer({ minimum: 0 }), { description: 'Mean event-loop delay (ms) of a one-second sample that counts as overloaded when sustained; `0` off.', default: 1000 }),
  EVENT_LOOP_DELAY_SAMPLES: env(Type.Integer({ minimum: 1, maximum: 600 }), { description: 'Samples in a row past `MAX_EVENT_LOOP_DELAY_MS` (or the utilisation limit) before requests get 503.', default: 5 }),
  OVERLOAD_RETRY_AFTER_SECONDS: env(Type.Integer({ minimum: 1, maximum: 3600 }), { description: '`Retry-After` (s) of every 503 (overloaded, starting, a backend down).', default: 5 }),
  MAX_EVENT_LOOP_UTILIZATION: env(Type.Number({ minimum: 0, maximum: 1 }), { description: 'Event-loop utilisation (0 to 1) that counts as overloaded when sustained, as the delay is; `0` off (a saturated but healthy process sits near 1).', default: 0 }),
  MAX_HEAP_BYTES: env(Type.Integer({ minimum: 0 }), { description: 'Heap ceiling (bytes) of the overload guard; `0` off.', default: 0 }),
  MEMORY_RELEASE_AFTER_MS: env(Type.Integer({ minimum: 0, maximum: 3_600_000 }), { description: 'Once no write that adds has run for this long, the service asks V8 for one collection that gives back the pages an ingest left resident (V8 keeps what a full collection frees in its page pool, and an idle process may never return it); it pauses the whole process (reads too) for a few full collections of the live heap, so it runs only while the heap in use is at most `MEMORY_RELEASE_MAX_HEAP`, when it is predicted to give back `MEMORY_RELEASE_MIN_GAIN`, 2% of `MEMORY_LIMIT` and a quarter of the heap in use, while no request is in flight, and no sooner than `MEMORY_RELEASE_INTERVAL_MS` after the last. `0` off (docs/operations.md, "Memory budget").', default: 10000 }),
  MEMORY_RELEASE_MIN_GAIN: env(Type.String({ pattern: MEMORY_LIMIT_PATTERN }), { description: 'The least a heap release must be predicted to give back (bytes, or a number with a unit as `MEMORY_LIMIT` takes), beside 2% of `MEMORY_LIMIT` and a quarter of the heap in use: the largest. The prediction is V8\'s pages mapped beyond its heap (its page pool, from `/proc/self/maps`) plus the heap\'s committed but unused pages, read before the release (docs/operations.md, "Memory budget").', default: '64MiB' }),
  MEMORY_RELEASE_MAX_HEAP: env(Type.String({ pattern: MEMORY_LIMIT_PATTERN }), { description: 'No heap release runs while the heap in use is above this (bytes, or a number with a unit as `MEMORY_LIMIT` takes): the release marks and compacts the whole heap, so its pause grows with it (about 1-1.6 s at 500 MiB, 4.5-5 s at 1 GiB on 2 loaded cores; tens of seconds at several GiB). Above it the page pool stays resident, and V8 reuses it for the next writes. Raise it to pay that pause (docs/operations.md, "Memory budget").', default: '512MiB' }),
  MEMORY_RELEASE_INTERVAL_MS: env(Type.Integer({ minimum: 0, maximum: 86_400_000 }), { description: 'The least time between two heap releases (ms): writes that go quiet again sooner wait for it.', default: 300000 }),
  MAX_RSS_BYTES: env(Type.Integer({ minimum: 0 }), { description: 'RSS ceiling (bytes) of the overload guard; `0` off.', default: 0 }),
  MEMORY_LIMIT: env(Type.String({ pattern: MEMORY_LIMIT_PATTERN }), { description: 'Resident memory the service process may hold: bytes, or a number with a unit (`512MiB`, `6GiB`, `1.5GB`; `k`/`m`/`g` alone are binary). `npm start` sets the V8 heap limit from it (`--max-old-space-size`, 75% of it); from 90% of it resident (or 85% of the heap limit held after a full collection), writes that add (document, graph and Episode ingests) answer 507 `RECALL_MEMORY_BUDGET` naming it, while reads, deletes and namespace drops go on; `/readyz` and `/metrics` show the budget in use. Unset: the container\'s cgroup limit, else 75% of the machine\'s memory (docs/operations.md, "Memory budget").' }),
  REPLICAS: env(Type.Integer({ minimum: 1, maximum: 10_000 }), { description: 'How many recall processes serve the same stores; above 1 the response cache needs `REDIS_URL` (else it is off) and document writes take a Redis lease lock (docs/scale-out-state.md).', default: 1 }),
  SOLE_WRITER_LEASE_MS: env(Type.Integer({ minimum: 100, maximum: 600_000 }), { description: 'How long (ms) this process\'s registration as the only writer of its stores lasts unless renewed (every third of it): with `REPLICAS=1` over Qdrant in Redis with `REDIS_URL`, else in the collection `<COLLECTION_PREFIX>writers`; with the embedded stores in `DATA_DIR/writer.json`. A second process finding it held refuses to start (a server, or `ingest --direct`); one killed without closing holds it this long at most, and on the embedded stores only until it is gone from this host (docs/scale-out-state.md, "One writer with `REPLICAS=1`").', default: 15000 }),
  MIN_GENERATION_WAIT_MS: env(Type.Integer({ minimum: 0, maximum: 60_000 }), { description: 'How long (ms) a read with `min_generation` waits for this replica to see that generation before answering 503 `RECALL_STALE_REPLICA`.', default: 1000 }),
  CHANGE_LOG_MAX_DOCUMENTS: env(Type.Integer({ minimum: 1, maximum: 10_000_000 }), { description: 'Changed document ids the change log keeps per namespace in Redis (the oldest go first); a replica further behind reads the whole namespace.', default: 100000 }),
  CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS: env(Type.Integer({ minimum: 1, maximum: 100_000 }), { description: 'Most changed documents a replica re-reads one by one when catching up; more, and it reads the whole namespace. At most `CHANGE_LOG_MAX_DOCUMENTS`.', default: 2000 }),
  CHANGE_LOG_WINDOW_DOCUMENTS: env(Type.Integer({ minimum: 0, maximum: 1_000_000 }), { description: 'Documents per namespace whose last write (its chunks, or that it was deleted) Redis keeps beside the change log, so that another replica catching up applies it without reading it back from Qdrant; the oldest go first, `0` keeps none (docs/scale-out-state.md, "The write window").', default: 1000 }),
  CHANGE_LOG_WINDOW_DOCUMENT_BYTES: env(Type.Integer({ minimum: 0, maximum: 16_777_216 }), { description: 'Largest kept write of one document, in bytes of its encoded chunks; a larger one is not kept (replicas read it back from Qdrant). The window holds at most `CHANGE_LOG_WINDOW_DOCUMENTS` times this per namespace.', default: 65536 }),
  CHANGE_LOG_WINDOW_SECONDS: env(Type.Integer({ minimum: 1, maximum: 86_400 }), { description: 'How long a kept write stays in the window (s); a namespace with no write for this long keeps none.', default: 60 }),
  CATALOG_FOLLOW_WRITES: env(Bool, { description: 'With several replicas over Qdrant and Redis: `true` subscribes to the writes every replica records and catches this replica\'s catalog (and lexical copy) up as each lands, before a read asks; `false` catches up only when a read finds a newer version (docs/scale-out-state.md).', default: 'true' }),
  GRAPHRAG_PARTIAL_NAMES: env(Bool, { description: '`true`: graphrag also reaches the entities whose name the question holds only in part (a piece of 3 to 6 characters, or a Latin word, inside at most 3 longer names, covering at least half of each: `流式返回` of `流式返回接口`; `matched_by: partial`, after the names it holds in full; docs/derivation.md, "Names the question holds in part"); `false`: names and aliases in full only.', default: 'true' }),
  GRAPHRAG_EVIDENCE_FALLBACK: env(Bool, { description: '`true`: when graphrag over a derived graph finds no entity by name, part of a name or keyword, it answers with the derived entities citing the 3 chunks that best match the question in the namespace\'s lexical index (`matched_by: evidence`, scores at most 0.3; docs/derivation.md, "When nothing is named"); `false`: such a question gets an empty bundle.', default: 'true' }),
  ENTITY_VECTORS: env(Bool, { description: '`true`: every entity name and alias of each namespace\'s knowledge graph (imported and derived) gets a vector in the namespace\'s entity collection, embedded in the background after the write answered (one per distinct text; pending names in `/metrics`), and graphrag and the hybrid `graph` leg reach, after the names the question holds, the entities nearest it above `GRAPHRAG_MEANING_FLOOR` (`matched_by: meaning`; docs/derivation.md, "Entities found by meaning"); `false`: names only, nothing embedded.', default: 'true' }),
  GRAPHRAG_MEANING_FLOOR: env(Type.Number({ minimum: 0, maximum: 1 }), { description: 'Least cosine similarity between the question (embedded as a query) and an entity name or alias for graphrag to reach the entity by meaning (docs/derivation.md, "Entities found by meaning", says how it was chosen).', default: 0.55 }),
  DERIVED_GRAPH: env(Bool, { description: '`true`: every document write derives the written documents\' entities and relations into the namespace\'s knowledge graph (marked derived, `d:` ids, never over an imported entity; docs/derivation.md); `false` never. With `REPLICAS`>1 only over Neo4j (`GRAPH_BACKEND=neo4j`): a graph each replica keeps in its own `DATA_DIR` would differ between replicas.', default: 'true' }),
  DERIVED_EPISODES: env(Bool, { description: '`true`: every document write derives the written documents\' Episodes (one per document or top-level section, its sections as Facets, its key sentences as FacetPoints, linked to the derived entities) into the namespace\'s episodic memory, apart from imported Episodes (their own `derived_` collections, `d:ep:` ids; docs/derivation.md, "Derived Episodes"); `false` never. With `REPLICAS`>1 only over Neo4j, as `DERIVED_GRAPH`. Labels, key sentences and summaries take their chunks\' vectors and no entity is linked by default, so only a namespace\'s first derived write embeds anything more than without: two edge labels (bench/results/derived-quality.log.md).', default: 'true' }),
  DERIVED_EPISODE_ENTITY_LINKS: env(Type.String({ pattern: '^[0-9]{1,2},[0-9]{1,2}$' }), { description: 'Derived entities each derived Facet and each derived Episode links to, as `facet,episode` (e.g. `4,8`), most mentioned first, of those `DERIVED_EPISODE_ENTITY_MIN_MENTIONS` lets through; `0,0` links none. A linked entity\'s name is embedded once per namespace, and its links\' edge labels (the same text) take that vector. On the demo corpus `4,8` gave episodic Recall@5 0.806 against 0.758 with none (95% interval of the difference [0, +0.113]), MRR@10 0.677 to 0.686 against 0.691; with entities mentioned twice or more the ingest ran at 0.62x to 0.82x the throughput without derivation on the demo corpus (three runs; 0.71x to 0.93x with none), 0.79x on 10,000 synthetic CMRC chunks (0.81x with none), 0.63x on the CMRC trial\'s paragraphs (0.82x with none) (bench/results/derived-quality.log.md, "Which entities to link").', default: '0,0' }),
  DERIVED_EPISODE_ENTITY_MIN_MENTIONS: env(Type.Integer({ minimum: 1, maximum: 100 }), { description: 'With `DERIVED_EPISODE_ENTITY_LINKS` set: least mentions in its document of a derived entity that a derived Facet or Episode links (key sentences still weigh every entity); `1` links any. `2` leaves out the names a document mentions once: on 10,000 synthetic CMRC chunks 1,717 names embedded instead of 7,555 with `4,8`, and on the demo corpus the Recall@5 of linking any (bench/results/derived-quality.log.md, "Which entities to link").', default: 2 }),
  DERIVATION_DICTIONARY: env(Type.String({ minLength: 1 }), { description: 'A UTF-8 file of terms the derivation keeps whole (one a line, `#` starts a comment), e.g. product, team and drug names; unset: none.' }),
  DERIVATION_NGRAM_MIN_COUNT: env(Type.Integer({ minimum: 0, maximum: 1000 }), { description: 'Least occurrences in one document of a CJK run of 2 to 6 characters that the derivation keeps whole as a term, when it is also cohesive (varied neighbours, split by jieba, no function word at an edge; bench/results/derived-graph.log.md, "Frequent n-grams"); `0` takes none.', default: 3 }),
  LLM_EXTRACTION: env(Bool, { description: '`true`: the derived graph also takes the entities and relations an LLM extracts from each written chunk, through an OpenAI-compatible `/v1/chat/completions` (needs `LLM_URL`, `LLM_MODEL` and `DERIVED_GRAPH=true`; marked `llm`; docs/llm-extraction.md); `false`: the rules alone.', default: 'false' }),
  LLM_URL: env(Type.String({ pattern: '^https?://' }), { description: 'Base URL of the chat server (OpenAI, vLLM, Ollama, llama.cpp), with or without `/v1`; required with `LLM_EXTRACTION=true`.' }),
  LLM_MODEL: env(Type.String({ minLength: 1 }), { description: 'Model name sent to that server; required with `LLM_EXTRACTION=true`. Part of the extraction cache key.' }),
  LLM_API_KEY: env(Type.String(), { description: 'Bearer key for that server; unset sends none.' }),
  LLM_RESPONSE_FORMAT: env(Type.Union([Type.Literal('json_object'), Type.Literal('json_schema')]), { description: '`json_object` (JSON mode, the widest support) or `json_schema` (structured output with the extraction schema, strict). The answer is checked against the schema either way.', default: 'json_object' }),
  LLM_CONCURRENCY: env(Type.Integer({ minimum: 1, maximum: 256 }), { description: 'Extraction calls in flight at once in the process.', default: 4 }),
  LLM_RETRIES: env(Type.Integer({ minimum: 0, maximum: 20 }), { description: 'Retries of a chunk\'s call after a 429, 408, 5xx, timeout, lost connection or an answer that is not the JSON asked for, with exponential backoff from 1 s (doubling, half jittered, at most 60 s, at least the server\'s `Retry-After`); then the chunk contributes the rules\' part only.', default: 3 }),
  LLM_TIMEOUT_MS: env(Millis, { description: 'Deadline of one extraction call, answer included (ms).', default: 60000 }),
  LLM_SYSTEM_PROMPT_FILE: env(Type.String({ minLength: 1 }), { description: 'The system prompt of extraction (UTF-8), read at start-up; unset: `prompts/extraction/system.md` of the install.' }),
  LLM_USER_PROMPT_FILE: env(Type.String({ minLength: 1 }), { description: 'The user message template of extraction, read at start-up: `{{text}}` (required) becomes the chunk, `{{heading}}` its title and heading path; unset: `prompts/extraction/user.md` of the install.' }),
  MCP_INGEST_TOOL: env(Bool, { description: '`true` adds the `ingest` and `remember` tools to the MCP server at `/mcp` (they then need a key like REST writes); the other tools are read-only.', default: 'false' }),
  FAILPOINTS: env(Type.Union([Type.Literal('after-journal'), Type.Literal('after-entity-journal')]), { description: 'For crash tests only: `after-journal` kills the process (SIGKILL) right after its first write is announced in the journal (over Qdrant), `after-entity-journal` right after its first entity-names write is (before it embeds a name), to show that a restart finishes the write (docs/write-path.md). Unset in service.' })
})
type Env = Static<typeof EnvSchema>

/** The validated configuration, with defaults applied and cross-field needs checked. */
export interface Config {
  port: number
  host: string
  logLevel: NonNullable<Env['LOG_LEVEL']>
  dataDir: string
  demoData: boolean
  vector: { backend: 'memory'; precision: 'float32' | 'int8'; oversample: number } | { backend: 'qdrant'; url: string; apiKey?: string; cluster: QdrantClusterSettings }
  /** Where BM25 lives: in process (`embedded`) or in the chunk points on Qdrant (`qdrant`, docs/scale-out.md). */
  lexical: {
    backend: 'embedded' | 'qdrant'; localCopy: boolean
    /** `cjk-bigram-english` with `LEXICAL_STEMMING` (on with the English model), else `cjk-bigram`. */
    analyzer: ServiceAnalyzer
    /** Added to the names of the embedded index's folders (`bm25`, `bm25-copy`): the model's, as its collections. */
    folderSuffix: string
  }
  /** `COLLECTION_PREFIX` and, for a model other than the default, the model's part (`collectionPart`). */
  collectionPrefix: string
  /**
   * Which model each namespace's vectors were made with (src/corpus/namespace-models.ts): `records`, the collection
   * that says so, shared by every model (`COLLECTION_PREFIX` + `namespace_models`); `legacy`, with the local embedder,
   * the collections where the default model's vectors were written before namespaces recorded their model.
   */
  namespaceModels: { records: string; legacy?: { model: string; collections: string[] } }
  graph: { backend: 'memory'; thread: boolean; episodicThread: boolean; foldThreads: number } | { backend: 'neo4j'; uri: string; user: string; password: string; database?: string }
  embedder:
    | { backend: 'local'; modelDir: string; model: string; threads: number; spinning: boolean; sessions: number; pool: 'threads' | 'processes'; queriesHere: boolean; weights: 'shared' | 'copies' }
    | { backend: 'openai'; url: string; model: string; apiKey?: string; dimensions?: number }
  limits: { maxQueryChars: number; bodyLimitBytes: number }
  /** `POST /evaluate`: most questions a judged set may hold, and longest an evaluation may run. */
  evaluation: { maxQuestions: number; timeoutSeconds: number }
  /** Document ingests run as jobs (src/corpus/ingest-jobs.ts): bodies over `jobBodyBytes`, written `jobBatchChunks` chunks at a time. */
  ingest: {
    jobBodyBytes: number
    jobBatchChunks: number
    /** `POST /ingest/files`: the largest file, the largest sum of one request's files (bytes), the most files. */
    files: { maxFileBytes: number; maxRequestBytes: number; maxFiles: number }
  }
  /** Recognition of pages without text and of image files (src/ocr, docs/formats.md "OCR"). */
  ocr: OcrConfig
  /** Per-backend-call timeouts in milliseconds: reads (queries) and writes (imports, deletes). */
  timeouts: {
    vector: number; lexical: number; embedding: number; graph: number
    vectorWrite: number; graphWrite: number; embeddingWrite: number
  }
  cache: {
    redisUrl?: string
    redisCommandTimeoutMs: number
    /** `REDIS_WAIT_REPLICAS`, `REDIS_WAIT_TIMEOUT_MS`: replicas that must confirm the write lock and the generations. */
    redisWait: ReplicaAcknowledgement
    /** `REDIS_RECORD_RETRY_MS`: with `redisWait.replicas` above 0, how long a write keeps trying to record itself. */
    recordRetryMs: number
    /** Whole responses; 0 turns the response cache off. */
    responseTtlSeconds: number
    /** Query embeddings; 0 turns the embedding cache off. */
    embeddingTtlSeconds: number
    maxEntries: number
    /** Why the response cache is off although CACHE_TTL_SECONDS is not 0, said at start-up. */
    responseCacheOff?: string
  }
  /** Several replicas over shared stores (docs/scale-out-state.md). */
  replicas: {
    /** `REPLICAS`: how many processes serve the same stores; more than 1 without Redis turns the response cache off. */
    count: number
    /** How long a read waits for a `min_generation` this replica has not seen, in milliseconds. */
    minGenerationWaitMs: number
    /**
     * The change log in Redis: document ids kept per namespace, and most changed documents a catch-up reads by id;
     * the write window beside it: documents whose last write is kept, the largest kept, and for how long (ms).
     */
    changeLog: { maxDocuments: number; maxCatchUpDocuments: number; window: { documents: number; documentBytes: number; ttlMs: number } }
    /** `CATALOG_FOLLOW_WRITES`: catch up as other replicas' writes are recorded, not only when a read finds them. */
    followWrites: boolean
    /** `SOLE_WRITER_LEASE_MS`: the lease of the only writer's registration (embedded stores, or `REPLICAS=1` over Qdrant), in ms. */
    soleWriterLeaseMs: number
    /** `REDIS_UNTAGGED_WRITE_LOCK`: on a Redis Cluster, also take the write lock's untagged key (an upgrade's side-by-side window). */
    untaggedWriteLock: boolean
  }
  security: {
    /** `API_KEYS`: each key for every namespace, or for the namespaces it names. */
    apiKeys: ScopedApiKey[]
    readKeysRequired: boolean
    /** 0 turns rate limiting off. */
    rateLimitMax: number
    rateLimitWindowMs: number
    corsOrigins: string[]
    trustProxy: boolean
  }
  /** When to refuse work with 503 (`src/http/plugins/overload.ts`); 0 turns a limit off. */
  overload: {
    maxInFlight: number
    maxEmbeddingQueue: number
    maxEmbeddingWaitMs: number
    maxEventLoopDelayMs: number
    eventLoopDelaySamples: number
    /** 0 (off) by default: a saturated but healthy process sits near 1. */
    maxEventLoopUtilization: number
    maxHeapBytes: number
    maxRssBytes: number
    retryAfterSeconds: number
  }
  /** The MCP server at `/mcp`: read-only tools, plus `ingest` when the operator turns it on (`MCP_INGEST_TOOL`). */
  mcp: { ingestTool: boolean }
  /** graphrag's matching (`GRAPHRAG_PARTIAL_NAMES`, `GRAPHRAG_EVIDENCE_FALLBACK`, `ENTITY_VECTORS`, `GRAPHRAG_MEANING_FLOOR`): docs/derivation.md, "Names the question holds in part", "When nothing is named", "Entities found by meaning". */
  graphrag: { partialNames: boolean; evidenceFallback: boolean; entityVectors: boolean; meaningFloor: number }
  /** The derived knowledge graph and Episodes (`DERIVED_GRAPH`, `DERIVED_EPISODES`, `DERIVATION_DICTIONARY`, `DERIVATION_NGRAM_MIN_COUNT`): docs/derivation.md; `llm`: docs/llm-extraction.md. */
  derivation: { enabled: boolean; episodes: boolean; episodeEntityLinks: { perFacet: number; perEpisode: number; minMentions: number }; dictionaryFile?: string; ngramMinCount: number; llm?: LlmExtractionConfig }
  /** The memory budget (`MEMORY_LIMIT`, src/memory/): the limit and where it came from; the heap release's `MEMORY_RELEASE_*`. */
  memory: MemoryLimit & { releaseAfterMs: number; releaseMinGainBytes: number; releaseIntervalMs: number; releaseMaxHeapBytes: number }
  /** Where a crash test has the process kill itself (`FAILPOINTS`); none in service. */
  failpoints: { afterJournal: boolean; afterEntityJournal: boolean }
  /** A document's pictures (`IMAGE_MIN_SIDE_PX`, `IMAGE_MIN_BYTES`, `IMAGE_MAX_STORED_BYTES`): src/corpus/images/pictures.ts. */
  images: PictureLimits
}

/** Extraction by an LLM (`LLM_*`), present only with `LLM_EXTRACTION=true`. */
export interface OcrConfig {
  languages: string
  /** Recognitions at once on the machine (every process naming `slotsDir`). */
  concurrency: number
  slotsDir: string
  /** Whether pictures in documents are recognised (scanned pages and image files always are). */
  pictures: boolean
  pageTimeoutMs: number
  dpi: number
  minConfidence: number
  maxImagePixels: number
}

export interface LlmExtractionConfig {
  url: string
  model: string
  apiKey?: string
  responseFormat: 'json_object' | 'json_schema'
  concurrency: number
  retries: number
  timeoutMs: number
  systemPromptFile?: string
  userPromptFile?: string
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

const INTEGER_VARS = new Set([
  'PORT', 'IMAGE_MIN_SIDE_PX', 'IMAGE_MIN_BYTES', 'IMAGE_MAX_STORED_BYTES', 'EMBEDDING_DIMENSIONS', 'EMBEDDING_THREADS', 'EMBEDDING_SESSIONS', 'MAX_QUERY_CHARS', 'BODY_LIMIT_BYTES', 'INGEST_JOB_BODY_BYTES', 'INGEST_JOB_BATCH_CHUNKS', 'INGEST_FILE_MAX_BYTES', 'INGEST_FILES_MAX_BYTES', 'INGEST_FILES_MAX_COUNT', 'OCR_CONCURRENCY', 'OCR_PAGE_TIMEOUT_MS', 'OCR_DPI', 'OCR_MAX_IMAGE_PIXELS', 'EVAL_MAX_QUESTIONS', 'EVAL_TIMEOUT_SECONDS',
  'VECTOR_TIMEOUT_MS', 'LEXICAL_TIMEOUT_MS', 'EMBEDDING_TIMEOUT_MS', 'GRAPH_TIMEOUT_MS', 'FOLD_THREADS',
  'VECTOR_WRITE_TIMEOUT_MS', 'GRAPH_WRITE_TIMEOUT_MS', 'EMBEDDING_WRITE_TIMEOUT_MS',
  'MAX_IN_FLIGHT', 'MAX_EMBEDDING_QUEUE', 'MAX_EMBEDDING_WAIT_MS', 'EVENT_LOOP_DELAY_SAMPLES', 'OVERLOAD_RETRY_AFTER_SECONDS',
  'REDIS_COMMAND_TIMEOUT_MS', 'REDIS_WAIT_REPLICAS', 'REDIS_WAIT_TIMEOUT_MS', 'REDIS_RECORD_RETRY_MS', 'CACHE_TTL_SECONDS', 'EMBEDDING_CACHE_TTL_SECONDS', 'CACHE_MAX_ENTRIES',
  'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_MS', 'MAX_EVENT_LOOP_DELAY_MS', 'MAX_HEAP_BYTES', 'MAX_RSS_BYTES', 'MEMORY_RELEASE_AFTER_MS', 'MEMORY_RELEASE_INTERVAL_MS',
  'LLM_CONCURRENCY', 'LLM_RETRIES', 'LLM_TIMEOUT_MS', 'DERIVATION_NGRAM_MIN_COUNT', 'DERIVED_EPISODE_ENTITY_MIN_MENTIONS',
  'REPLICAS', 'SOLE_WRITER_LEASE_MS', 'QDRANT_SHARD_NUMBER', 'QDRANT_REPLICATION_FACTOR', 'QDRANT_WRITE_CONSISTENCY_FACTOR', 'MIN_GENERATION_WAIT_MS', 'CHANGE_LOG_MAX_DOCUMENTS', 'CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS',
  'CHANGE_LOG_WINDOW_DOCUMENTS', 'CHANGE_LOG_WINDOW_DOCUMENT_BYTES', 'CHANGE_LOG_WINDOW_SECONDS', 'VECTOR_RESCORE_OVERSAMPLE'
])

/** What a variable accepts, in words, for the start-up error. */
function describe(schema: TSchema): string {
  const s = schema as { anyOf?: { const?: unknown }[]; pattern?: string; minimum?: number; maximum?: number; minLength?: number }
  if (s.anyOf) return `must be one of ${s.anyOf.map((o) => String(o.const)).join(' | ')}`
  if (s.pattern) return `must match ${s.pattern}`
  if (s.minimum !== undefined || s.maximum !== undefined) return `must be between ${s.minimum ?? '-∞'} and ${s.maximum ?? '∞'}`
  if (s.minLength) return 'must not be empty'
  return 'is invalid'
}

/**
 * `API_KEYS`: comma-separated entries, each `key` (every namespace) or `key=ns1|ns2` (only those). A bad entry
 * is a problem naming its position, never the key itself.
 */
function parseApiKeys(value: string, problems: string[]): ScopedApiKey[] {
  return value.split(',').map((entry, i) => {
    const at = entry.indexOf('=')
    if (at < 0) return { key: entry }
    const key = entry.slice(0, at)
    const namespaces = entry.slice(at + 1).split('|')
    if (key === '') problems.push(`API_KEYS entry ${i + 1}: the key before "=" is empty`)
    for (const ns of namespaces) {
      if (!isNamespace(ns)) problems.push(`API_KEYS entry ${i + 1}: namespace ${JSON.stringify(ns)} does not match ${NAMESPACE_PATTERN}`)
    }
    return { key, namespaces }
  })
}

/** `QDRANT_READ_CONSISTENCY` as Qdrant takes it: a number of replicas, or one of its words. */
function readConsistency(value: string): QdrantReadConsistency {
  return /^\d+$/.test(value) ? Number(value) : value as 'majority' | 'quorum' | 'all'
}

/** Reads and validates the environment once; throws a ConfigError naming every bad variable. */
/** The fixed defaults the schema declares (`default`), by variable: `loadConfig` reads them from here, never restates them. */
const SCHEMA_DEFAULTS: Partial<Record<keyof Env, string | number>> = Object.fromEntries(
  Object.entries(EnvSchema.properties as Record<string, { default?: string | number }>).flatMap(([key, schema]) => (schema.default === undefined ? [] : [[key, schema.default]]))
)

/** The variables whose schema has a fixed default. */
type DefaultedVariable = {
  [K in keyof Env]-?: K extends 'LEXICAL_BACKEND' | 'LEXICAL_STEMMING' | 'GRAPH_THREAD' | 'FOLD_THREADS' | 'EMBEDDING_SESSIONS' | 'OCR_CONCURRENCY' | 'REDIS_WAIT_REPLICAS' | 'MAX_EMBEDDING_WAIT_MS' ? never : K
}[keyof Env]

/** The defaults that follow other variables or the machine (the schema describes them in words, with no `default`). */
const DERIVED_DEFAULTS = {
  /** The lexical leg lives where the vectors do: in the chunk points on Qdrant, in files beside the embedded store. */
  lexicalBackend: (vectorBackend: string): 'qdrant' | 'embedded' => (vectorBackend === 'qdrant' ? 'qdrant' : 'embedded'),
  /** English words are stemmed with the English model only. */
  lexicalStemming: (model: string): string => String(model === 'bge-small-en-v1.5'),
  /**
   * One single-threaded session per core: the query embeddings of concurrent requests run side by side, and a text's
   * vector is the same bytes whichever session embeds it (bench/results/concurrency.log.md). On one core a session
   * process would only add its messages.
   */
  embeddingSessions: (): number => (availableParallelism() > 1 ? availableParallelism() : 0),
  /**
   * The knowledge graph in a thread of its own when there is a second core to run it on and memory was not given a
   * budget (`MEMORY_LIMIT`, a container's limit): the thread takes a 1M start-up to 0.77x, but under `MEMORY_LIMIT=6GiB`
   * an ingest was refused at 426,800 chunks with it against 535,600 without, one run each (bench/results/memory.log.md).
   */
  graphThread: (budget: MemoryLimit['source']): string => String(availableParallelism() > 1 && budget === 'machine'),
  /** One fold thread at a time under a budget: two at once hold both their heaps at the moment the budget is checked. */
  foldThreads: (budget: MemoryLimit['source']): number => (budget === 'machine' ? 0 : 1),
  /** Half the cores: a page takes one whole core for seconds, and the embedding sessions need the others. */
  ocrConcurrency: (): number => Math.max(1, Math.floor(availableParallelism() / 2)),
  /** One folder every process of the machine sees. */
  ocrSlotsDir: (): string => join(tmpdir(), 'recall-ocr-slots'),
  /** A cluster's and a Sentinel's masters have replicas to lose a write to; one server's may have none. */
  redisWaitReplicas: (redisUrl: string | undefined): number => (redisUrl && /^rediss?\+(cluster|sentinel):/.test(redisUrl) ? 1 : 0),
  /**
   * Half the embedding timeout: a request accepted then still gets its vector in time, with room for the estimate to
   * be short (runs slow down as the load rises; bench/results/overload.json).
   */
  maxEmbeddingWaitMs: (embeddingTimeoutMs: number): number => Math.round(0.5 * embeddingTimeoutMs)
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const env: Record<string, unknown> = {}
  const problems: string[] = []
  for (const key of Object.keys(EnvSchema.properties)) {
    const raw = source[key]
    if (raw === undefined || raw === '') continue
    if (INTEGER_VARS.has(key)) {
      if (!/^-?\d+$/.test(raw.trim())) problems.push(`${key}=${JSON.stringify(raw)}: must be an integer`)
      else env[key] = Number(raw.trim())
    } else if (key === 'MAX_EVENT_LOOP_UTILIZATION' || key === 'GRAPHRAG_MEANING_FLOOR' || key === 'OCR_MIN_CONFIDENCE') {
      if (!/^\d+(\.\d+)?$/.test(raw.trim())) problems.push(`${key}=${JSON.stringify(raw)}: must be a number`)
      else env[key] = Number(raw.trim())
    } else {
      env[key] = raw
    }
  }
  for (const [key, value] of Object.entries(env)) {
    const schema = (EnvSchema.properties as Record<string, TSchema>)[key]!
    if (!Value.Check(schema, value)) problems.push(`${key}=${JSON.stringify(value)}: ${describe(schema)}`)
  }
  const memoryLimitBytes = typeof env['MEMORY_LIMIT'] === 'string' ? parseMemoryLimit(env['MEMORY_LIMIT']) : undefined
  if (typeof env['MEMORY_LIMIT'] === 'string' && new RegExp(MEMORY_LIMIT_PATTERN).test(env['MEMORY_LIMIT']) && memoryLimitBytes === undefined) problems.push(`MEMORY_LIMIT=${JSON.stringify(env['MEMORY_LIMIT'])}: must be more than 0 bytes`)
  for (const name of ['MEMORY_RELEASE_MIN_GAIN', 'MEMORY_RELEASE_MAX_HEAP']) {
    const text = env[name]
    if (typeof text === 'string' && new RegExp(MEMORY_LIMIT_PATTERN).test(text) && parseMemoryLimit(text) === undefined) problems.push(`${name}=${JSON.stringify(text)}: must be more than 0 bytes`)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  const e = env as Env
  /** A variable as set, or its schema default (only for a variable whose schema has one). */
  const valueOf = <K extends DefaultedVariable>(key: K): NonNullable<Env[K]> => (e[key] ?? SCHEMA_DEFAULTS[key]) as NonNullable<Env[K]>

  const vectorBackend = valueOf('VECTOR_BACKEND')
  if (vectorBackend === 'qdrant' && !e.QDRANT_URL) problems.push('VECTOR_BACKEND=qdrant needs QDRANT_URL')
  const lexicalBackend = e.LEXICAL_BACKEND ?? DERIVED_DEFAULTS.lexicalBackend(vectorBackend)
  const replicationFactor = valueOf('QDRANT_REPLICATION_FACTOR')
  const writeConsistencyFactor = valueOf('QDRANT_WRITE_CONSISTENCY_FACTOR')
  if (writeConsistencyFactor > replicationFactor) {
    problems.push(`QDRANT_WRITE_CONSISTENCY_FACTOR=${writeConsistencyFactor} is above QDRANT_REPLICATION_FACTOR=${replicationFactor}: ` +
      'a write cannot be confirmed by more replicas than a shard has')
  }
  if (lexicalBackend === 'qdrant' && vectorBackend !== 'qdrant') {
    problems.push('LEXICAL_BACKEND=qdrant needs VECTOR_BACKEND=qdrant (the lexical leg lives in the chunk points)')
  }
  const graphBackend = valueOf('GRAPH_BACKEND')
  if (graphBackend === 'neo4j' && !e.NEO4J_URI) problems.push('GRAPH_BACKEND=neo4j needs NEO4J_URI')
  const embedderBackend = valueOf('EMBEDDER')
  const model = valueOf('EMBEDDING_MODEL')
  if (embedderBackend === 'openai' && !e.EMBEDDING_URL) problems.push('EMBEDDER=openai needs EMBEDDING_URL')
  if (embedderBackend === 'openai' && !e.EMBEDDING_MODEL) problems.push('EMBEDDER=openai needs EMBEDDING_MODEL')
  if (embedderBackend === 'local' && e.EMBEDDING_MODEL !== undefined && !isLocalModel(e.EMBEDDING_MODEL)) {
    problems.push(`EMBEDDING_MODEL=${e.EMBEDDING_MODEL} is not a local model: use ${Object.keys(LOCAL_MODELS).join(' or ')}, or EMBEDDER=openai`)
  }
  if (e.READ_API_KEYS_REQUIRED === 'true' && !e.API_KEYS) problems.push('READ_API_KEYS_REQUIRED=true needs API_KEYS')
  if (e.LLM_EXTRACTION === 'true') {
    if (!e.LLM_URL) problems.push('LLM_EXTRACTION=true needs LLM_URL')
    if (!e.LLM_MODEL) problems.push('LLM_EXTRACTION=true needs LLM_MODEL')
    if (e.DERIVED_GRAPH === 'false') problems.push('LLM_EXTRACTION=true needs DERIVED_GRAPH=true (the extraction joins the derived graph)')
  }
  const apiKeys = e.API_KEYS ? parseApiKeys(e.API_KEYS, problems) : []
  if (e.REDIS_URL) {
    try {
      clusterAddress(e.REDIS_URL)
      sentinelAddress(e.REDIS_URL)
    } catch (error) {
      problems.push(`REDIS_URL: ${(error as Error).message}`)
    }
  }
  const changeLog = {
    maxDocuments: valueOf('CHANGE_LOG_MAX_DOCUMENTS'), maxCatchUpDocuments: valueOf('CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS'),
    // A follower hears of a write within milliseconds; a minute also covers a replica that catches up only on its reads.
    window: { documents: valueOf('CHANGE_LOG_WINDOW_DOCUMENTS'), documentBytes: valueOf('CHANGE_LOG_WINDOW_DOCUMENT_BYTES'), ttlMs: valueOf('CHANGE_LOG_WINDOW_SECONDS') * 1000 }
  }
  if (changeLog.maxCatchUpDocuments > changeLog.maxDocuments) {
    problems.push(`CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS=${changeLog.maxCatchUpDocuments} is above CHANGE_LOG_MAX_DOCUMENTS=${changeLog.maxDocuments}: ` +
      'a log that keeps fewer documents can never list that many changes (set it at most the log\'s length)')
  }
  if (problems.length > 0) throw new ConfigError(problems)

  const embeddingTimeoutMs = valueOf('EMBEDDING_TIMEOUT_MS')
  const replicas = valueOf('REPLICAS')
  // Each replica's in-process cache would keep answers from before another replica's write: no shared version.
  const responseCacheOff = replicas > 1 && !e.REDIS_URL && valueOf('CACHE_TTL_SECONDS') > 0
    ? `REPLICAS=${replicas} without REDIS_URL: the response cache is off (its versions must be shared to see other replicas' writes)`
    : undefined
  return {
    port: valueOf('PORT'),
    host: valueOf('HOST'),
    logLevel: valueOf('LOG_LEVEL'),
    dataDir: valueOf('DATA_DIR'),
    demoData: valueOf('DEMO_DATA') === 'true',
    vector: vectorBackend === 'qdrant'
      ? {
          backend: 'qdrant', url: e.QDRANT_URL!, ...(e.QDRANT_API_KEY ? { apiKey: e.QDRANT_API_KEY } : {}),
          cluster: {
            ...(e.QDRANT_SHARD_NUMBER !== undefined ? { shardNumber: e.QDRANT_SHARD_NUMBER } : {}),
            replicationFactor, writeConsistencyFactor, readConsistency: readConsistency(valueOf('QDRANT_READ_CONSISTENCY'))
          }
        }
      : { backend: 'memory', precision: valueOf('VECTOR_PRECISION'), oversample: valueOf('VECTOR_RESCORE_OVERSAMPLE') },
    lexical: {
      backend: lexicalBackend, localCopy: valueOf('LEXICAL_LOCAL_COPY') === 'true',
      analyzer: (e.LEXICAL_STEMMING ?? DERIVED_DEFAULTS.lexicalStemming(model)) === 'true' ? 'cjk-bigram-english' : 'cjk-bigram',
      folderSuffix: embedderBackend === 'local' ? collectionPart(model).replace(/_$/, '').replace(/^(.)/, '-$1') : ''
    },
    // each local model's vectors in collections of their own; the default model's (and a remote one's) keep the names they had
    collectionPrefix: `${valueOf('COLLECTION_PREFIX')}${embedderBackend === 'local' ? collectionPart(model) : ''}`,
    namespaceModels: {
      records: `${valueOf('COLLECTION_PREFIX')}namespace_models`,
      ...(embedderBackend === 'local' && model !== DEFAULT_MODEL
        ? { legacy: { model: DEFAULT_MODEL, collections: ['chunks', 'Episode_summary'].map((c) => `${valueOf('COLLECTION_PREFIX')}${c}`) } } : {})
    },
    graph: graphBackend === 'neo4j'
      ? {
          backend: 'neo4j', uri: e.NEO4J_URI!, user: valueOf('NEO4J_USER'), password: valueOf('NEO4J_PASSWORD'),
          ...(e.NEO4J_DATABASE ? { database: e.NEO4J_DATABASE } : {})
        }
      : {
          backend: 'memory',
          thread: (e.GRAPH_THREAD ?? DERIVED_DEFAULTS.graphThread(memoryLimit(memoryLimitBytes).source)) === 'true',
          episodicThread: valueOf('EPISODIC_THREAD') === 'true',
          foldThreads: e.FOLD_THREADS ?? DERIVED_DEFAULTS.foldThreads(memoryLimit(memoryLimitBytes).source)
        },
    embedder: embedderBackend === 'openai'
      ? {
          backend: 'openai', url: e.EMBEDDING_URL!, model: e.EMBEDDING_MODEL!,
          ...(e.EMBEDDING_API_KEY ? { apiKey: e.EMBEDDING_API_KEY } : {}),
          ...(e.EMBEDDING_DIMENSIONS ? { dimensions: e.EMBEDDING_DIMENSIONS } : {})
        }
      : {
          backend: 'local', modelDir: valueOf('MODEL_DIR'), model: valueOf('EMBEDDING_MODEL'),
          // One ONNX thread: a second one waits for a core at every operator on a busy machine. Measured here
          // (load average ~7, 2 cores): a query 2.3 ms vs 9.0 ms p50, a 480-character passage 55 vs 144 ms.
          threads: valueOf('EMBEDDING_THREADS'),
          spinning: valueOf('EMBEDDING_SPINNING') === 'true',
          sessions: e.EMBEDDING_SESSIONS ?? DERIVED_DEFAULTS.embeddingSessions(),
          pool: valueOf('EMBEDDING_POOL'),
          queriesHere: valueOf('EMBEDDING_QUERIES_HERE') === 'true',
          weights: valueOf('EMBEDDING_WEIGHTS')
        },
    limits: { maxQueryChars: valueOf('MAX_QUERY_CHARS'), bodyLimitBytes: valueOf('BODY_LIMIT_BYTES') },
    evaluation: { maxQuestions: valueOf('EVAL_MAX_QUESTIONS'), timeoutSeconds: valueOf('EVAL_TIMEOUT_SECONDS') },
    // Past 1 MiB (some 350,000 Chinese characters) a synchronous answer keeps a caller, and a proxy's timeout, waiting for
    // many seconds with nothing to show; 64 chunks is two embedding batches between cancel points.
    ingest: {
      jobBodyBytes: valueOf('INGEST_JOB_BODY_BYTES'), jobBatchChunks: valueOf('INGEST_JOB_BATCH_CHUNKS'),
      // 100 MiB holds a 1,000-page scan at 150 dpi (about 60 KiB a grayscale page); 500 MiB a folder of them
      files: { maxFileBytes: valueOf('INGEST_FILE_MAX_BYTES'), maxRequestBytes: valueOf('INGEST_FILES_MAX_BYTES'), maxFiles: valueOf('INGEST_FILES_MAX_COUNT') }
    },
    ocr: {
      languages: valueOf('OCR_LANGUAGES'),
      concurrency: e.OCR_CONCURRENCY ?? DERIVED_DEFAULTS.ocrConcurrency(),
      slotsDir: e.OCR_SLOTS_DIR ?? DERIVED_DEFAULTS.ocrSlotsDir(),
      pictures: valueOf('OCR_PICTURES') === 'true',
      pageTimeoutMs: valueOf('OCR_PAGE_TIMEOUT_MS'),
      // 150 dpi read Chinese pages best and English ones as well as 300 (bench/results/ocr-engines.json)
      dpi: valueOf('OCR_DPI'),
      minConfidence: valueOf('OCR_MIN_CONFIDENCE'),
      maxImagePixels: valueOf('OCR_MAX_IMAGE_PIXELS')
    },
    // Defaults: a local ONNX query embedding takes ~10 ms and an exact scan ~5 ms at 10k chunks; the
    // timeouts leave an order of magnitude for load spikes while keeping a hybrid answer under ~2 s.
    timeouts: {
      vector: valueOf('VECTOR_TIMEOUT_MS'),
      lexical: valueOf('LEXICAL_TIMEOUT_MS'),
      embedding: embeddingTimeoutMs,
      graph: valueOf('GRAPH_TIMEOUT_MS'),
      // Writes get a minute: a bulk import's first write on a busy server (Neo4j plan compile, lock waits,
      // Qdrant segment work, a remote model's batch) may take far longer than a query, and an import
      // should fail only when a backend is really gone.
      vectorWrite: valueOf('VECTOR_WRITE_TIMEOUT_MS'),
      graphWrite: valueOf('GRAPH_WRITE_TIMEOUT_MS'),
      embeddingWrite: valueOf('EMBEDDING_WRITE_TIMEOUT_MS')
    },
    cache: {
      ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
      // A cache round trip must cost less than the work it saves: a query embedding is ~5-20 ms.
      redisCommandTimeoutMs: valueOf('REDIS_COMMAND_TIMEOUT_MS'),
      redisWait: {
        replicas: e.REDIS_WAIT_REPLICAS ?? DERIVED_DEFAULTS.redisWaitReplicas(e.REDIS_URL),
        timeoutMs: valueOf('REDIS_WAIT_TIMEOUT_MS')
      },
      // a failover (cluster-node-timeout plus about a second) and the old master back as a replica (seconds more)
      recordRetryMs: valueOf('REDIS_RECORD_RETRY_MS'),
      responseTtlSeconds: responseCacheOff ? 0 : valueOf('CACHE_TTL_SECONDS'),
      ...(responseCacheOff ? { responseCacheOff } : {}),
      // The vector of a text never changes under one model; a day bounds the memory it holds.
      embeddingTtlSeconds: valueOf('EMBEDDING_CACHE_TTL_SECONDS'),
      maxEntries: valueOf('CACHE_MAX_ENTRIES')
    },
    // A second is many times a Redis round trip and the refresh of what a replica derives from the stores.
    replicas: { count: replicas, minGenerationWaitMs: valueOf('MIN_GENERATION_WAIT_MS'), changeLog, followWrites: valueOf('CATALOG_FOLLOW_WRITES') === 'true',
      // Renewed every 5 s: a crashed writer blocks its replacement for 15 s at most, and a renewal may fail twice.
      soleWriterLeaseMs: valueOf('SOLE_WRITER_LEASE_MS'),
      untaggedWriteLock: valueOf('REDIS_UNTAGGED_WRITE_LOCK') === 'true'
    },
    security: {
      apiKeys,
      readKeysRequired: e.READ_API_KEYS_REQUIRED === 'true',
      rateLimitMax: valueOf('RATE_LIMIT_MAX'),
      rateLimitWindowMs: valueOf('RATE_LIMIT_WINDOW_MS'),
      corsOrigins: e.CORS_ORIGINS ? e.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean) : [],
      trustProxy: e.TRUST_PROXY === 'true'
    },
    overload: {
      // See the Reliability section of the README for how these defaults were chosen (bench/overload.ts).
      maxInFlight: valueOf('MAX_IN_FLIGHT'),
      maxEmbeddingQueue: valueOf('MAX_EMBEDDING_QUEUE'),
      maxEmbeddingWaitMs: e.MAX_EMBEDDING_WAIT_MS ?? DERIVED_DEFAULTS.maxEmbeddingWaitMs(embeddingTimeoutMs),
      maxEventLoopDelayMs: valueOf('MAX_EVENT_LOOP_DELAY_MS'),
      eventLoopDelaySamples: valueOf('EVENT_LOOP_DELAY_SAMPLES'),
      maxEventLoopUtilization: valueOf('MAX_EVENT_LOOP_UTILIZATION'),
      maxHeapBytes: valueOf('MAX_HEAP_BYTES'),
      maxRssBytes: valueOf('MAX_RSS_BYTES'),
      retryAfterSeconds: valueOf('OVERLOAD_RETRY_AFTER_SECONDS')
    },
    mcp: { ingestTool: e.MCP_INGEST_TOOL === 'true' },
    graphrag: {
      partialNames: valueOf('GRAPHRAG_PARTIAL_NAMES') === 'true', evidenceFallback: valueOf('GRAPHRAG_EVIDENCE_FALLBACK') === 'true',
      entityVectors: valueOf('ENTITY_VECTORS') === 'true', meaningFloor: valueOf('GRAPHRAG_MEANING_FLOOR')
    },
    derivation: {
      enabled: valueOf('DERIVED_GRAPH') === 'true', episodes: valueOf('DERIVED_EPISODES') === 'true',
      episodeEntityLinks: { ...entityLinks(valueOf('DERIVED_EPISODE_ENTITY_LINKS')), minMentions: valueOf('DERIVED_EPISODE_ENTITY_MIN_MENTIONS') },
      ...(e.DERIVATION_DICTIONARY ? { dictionaryFile: e.DERIVATION_DICTIONARY } : {}),
      ngramMinCount: valueOf('DERIVATION_NGRAM_MIN_COUNT'),
      ...(e.LLM_EXTRACTION === 'true' ? {
        llm: {
          url: e.LLM_URL!, model: e.LLM_MODEL!, ...(e.LLM_API_KEY ? { apiKey: e.LLM_API_KEY } : {}),
          responseFormat: valueOf('LLM_RESPONSE_FORMAT'),
          // Four calls at once keep a small local server busy without queueing far behind its batch.
          concurrency: valueOf('LLM_CONCURRENCY'),
          retries: valueOf('LLM_RETRIES'),
          // A chunk's extraction is a few hundred tokens out: a minute covers a slow local model.
          timeoutMs: valueOf('LLM_TIMEOUT_MS'),
          ...(e.LLM_SYSTEM_PROMPT_FILE ? { systemPromptFile: e.LLM_SYSTEM_PROMPT_FILE } : {}),
          ...(e.LLM_USER_PROMPT_FILE ? { userPromptFile: e.LLM_USER_PROMPT_FILE } : {})
        }
      } : {})
    },
    memory: { ...memoryLimit(memoryLimitBytes), releaseAfterMs: valueOf('MEMORY_RELEASE_AFTER_MS'), releaseMinGainBytes: parseMemoryLimit(valueOf('MEMORY_RELEASE_MIN_GAIN')) ?? 0, releaseIntervalMs: valueOf('MEMORY_RELEASE_INTERVAL_MS'), releaseMaxHeapBytes: parseMemoryLimit(valueOf('MEMORY_RELEASE_MAX_HEAP')) ?? 0 },
    failpoints: { afterJournal: e.FAILPOINTS === 'after-journal', afterEntityJournal: e.FAILPOINTS === 'after-entity-journal' },
    images: {
      minSidePx: valueOf('IMAGE_MIN_SIDE_PX'), minBytes: valueOf('IMAGE_MIN_BYTES'),
      maxStoredBytes: valueOf('IMAGE_MAX_STORED_BYTES')
    }
  }
}

function entityLinks(value: string): { perFacet: number; perEpisode: number } {
  const [perFacet, perEpisode] = value.split(',').map(Number) as [number, number]
  return { perFacet, perEpisode }
}
