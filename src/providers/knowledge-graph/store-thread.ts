import { workerData } from 'node:worker_threads'
import { servePort } from '../embedded/serve-port.js'
import { EmbeddedKnowledgeGraphStore, type EmbeddedKnowledgeGraphOptions } from './embedded.js'

// The thread that holds the embedded knowledge graph (`ThreadedKnowledgeGraphStore`): its load, writes and reads.
servePort(new EmbeddedKnowledgeGraphStore(workerData as EmbeddedKnowledgeGraphOptions))
