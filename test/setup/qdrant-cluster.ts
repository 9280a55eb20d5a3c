import type {} from 'vitest' // brings the module into scope so the augmentation below merges
import type { TestProject } from 'vitest/node'
import { residentMb, serveNodeControl } from '../helpers/cluster-control.js'
import { canStartQdrantCluster, QDRANT_CLUSTER_SKIP_LINE, startQdrantCluster, type SharedQdrantCluster } from '../helpers/qdrant-cluster.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * The 3-node Qdrant cluster the whole run shares (`useSharedQdrantCluster`): its nodes and the endpoint that stops
     * and restarts them; `null` when QDRANT_SERVER_DIR holds no Qdrant, and the cluster suites are skipped.
     */
    qdrantCluster: SharedQdrantCluster | null
  }
}

/**
 * Starts one 3-node Qdrant cluster (the binary of QDRANT_SERVER_DIR, `../shared/qdrant/` by default) for the whole
 * run, beside the single server of ./qdrant.ts: the cluster suites share it, and the one that kills a node starts it
 * again. Without the binary the suites skip with one line; under CI (`CI=true`) the run fails instead.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!canStartQdrantCluster()) {
    if (process.env.CI === 'true') throw new Error(`CI runs every suite: ${QDRANT_CLUSTER_SKIP_LINE}`)
    console.warn(`no Qdrant cluster for this run: ${QDRANT_CLUSTER_SKIP_LINE}`)
    project.provide('qdrantCluster', null)
    return undefined
  }
  const started = performance.now()
  const cluster = await startQdrantCluster(3)
  const nodeAt = (index: string) => {
    const node = cluster.nodes[Number(index)]
    if (!node) throw new Error(`the cluster has no node ${index}`)
    return node
  }
  const control = await serveNodeControl({
    stop: (index, signal) => nodeAt(index).stop(signal),
    restart: (index) => nodeAt(index).restart()
  })
  console.log(`qdrant cluster for this run: 3 nodes ready in ${Math.round(performance.now() - started)} ms, ` +
    `${residentMb(cluster.nodes.map((n) => n.pid))} MB resident`)
  project.provide('qdrantCluster', {
    nodes: cluster.nodes.map(({ url, httpPort, grpcPort, p2pPort, dir }) => ({ url, httpPort, grpcPort, p2pPort, dir })),
    control: control.url
  })
  return async () => {
    await control.close()
    await cluster.close()
  }
}
