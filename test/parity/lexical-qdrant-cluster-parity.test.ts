/**
 * The lexical leg's statistics (N, lengths, df: exact facets and counts) summed over the shards of a 3-node
 * cluster, each shard in two replicas: the same CMRC suite as on one server, against the embedded index.
 */
import { inject } from 'vitest'
import { QDRANT_CLUSTER_SKIP_LINE, useSharedQdrantCluster } from '../helpers/qdrant-cluster.js'
import { lexicalParitySuite } from './lexical-parity-suite.js'

// the run's cluster (test/setup/qdrant-cluster.ts); this suite only adds and drops its own collection
const shared = inject('qdrantCluster')
const skip = shared ? undefined : `lexical-qdrant-cluster-parity: ${QDRANT_CLUSTER_SKIP_LINE}`
if (skip) console.warn(skip)

lexicalParitySuite('lexical leg on a 3-node Qdrant cluster (3 shards, 2 replicas each) against the embedded index', {
  skip,
  start: async () => {
    const cluster = useSharedQdrantCluster(shared!)
    return { url: cluster.url, close: () => cluster.close() }
  },
  env: { QDRANT_SHARD_NUMBER: '3', QDRANT_REPLICATION_FACTOR: '2', QDRANT_WRITE_CONSISTENCY_FACTOR: '1', QDRANT_READ_CONSISTENCY: '1' },
  params: { shard_number: 3, replication_factor: 2, write_consistency_factor: 1 },
  // every paragraph is written, edited and counted as on one server; a third of the questions are asked (~10 min otherwise at load ~30)
  questions: 330
})
