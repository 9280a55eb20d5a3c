import { parseArgs } from 'node:util'
import { isNamespace, NAMESPACE_PATTERN } from '../providers/namespace.js'
import type { Reembedded } from '../corpus/model-stores.js'

const USAGE = `usage: EMBEDDING_MODEL=<model> npm run reembed -- --namespace NS

Re-embeds a namespace made with another local model with EMBEDDING_MODEL's (docs/namespaces.md, "The embedding model
of a namespace"): every chunk, episodic and entity-name vector is made again from the text the stores hold (no source
is read again; documents, chunks and their ids stay), the namespace's lexical index is rebuilt with this model's
analyzer, the other model's vectors and lexical files are removed, and the namespace's model record says this model.
One write through the write path (locks, journal, generation). Run it with the configuration the service uses; on the
embedded stores (VECTOR_BACKEND=memory), with the service stopped: they have one writer.
  --namespace NS   the namespace (${NAMESPACE_PATTERN})`

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, out: NodeJS.WritableStream = process.stderr): Promise<Reembedded | undefined> {
  const { values } = parseArgs({ args: argv, options: { namespace: { type: 'string' }, help: { type: 'boolean' } } })
  if (values.help) {
    out.write(`${USAGE}\n`)
    return undefined
  }
  if (values.namespace === undefined) throw new Error('--namespace is required')
  if (!isNamespace(values.namespace)) throw new Error(`--namespace "${values.namespace}" does not match ${NAMESPACE_PATTERN}`)
  const [{ loadConfig }, { openServices }] = await Promise.all([import('../config.js'), import('../services.js')])
  const services = await openServices(loadConfig(env))
  try {
    const started = performance.now()
    const { reembedded, generation } = await services.writePath.write(values.namespace, { kind: 'model', op: 'reembed' })
    const ms = Math.round(performance.now() - started)
    out.write(reembedded.from.length === 0
      ? `reembed: namespace "${values.namespace}" holds no vectors of another local model: nothing to do\n`
      : `reembed: namespace "${values.namespace}" moved from ${reembedded.from.join(', ')} to ${services.embedder.model}: ` +
        `${reembedded.chunks} chunks and ${reembedded.others} episodic and entity-name records embedded again in ${ms} ms` +
        `${generation !== undefined ? ` (generation ${generation})` : ''}\n`)
    return reembedded
  } finally {
    await services.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error: Error) => {
    process.stderr.write(`${error.message}\n${USAGE}\n`)
    process.exit(1)
  })
}
