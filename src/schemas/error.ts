import { Type, type Static } from 'typebox'

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'The HTTP status code, repeated.' }),
  code: Type.String({ description: 'Stable machine-readable code, `RECALL_<AREA>_<WHAT>` or Fastify\'s own `FST_…`.' }),
  error: Type.String({ description: 'HTTP reason phrase.' }),
  message: Type.String({ description: 'What is wrong, for a person.' })
}, { description: 'Every error answer has this shape.' })
export type ErrorBody = Static<typeof ErrorSchema>

export const errorExample = (statusCode: number, code: string, error: string, message: string) =>
  ({ statusCode, code, error, message })

/** The 507 of a write that adds once the memory budget is spent (src/memory/budget.ts). */
export const MemoryBudgetResponse = {
  ...ErrorSchema,
  description: 'The memory budget (MEMORY_LIMIT) is spent: nothing was written; reads, deletes and namespace drops go on. The message names the limit, what each namespace holds and what to do',
  example: errorExample(507, 'RECALL_MEMORY_BUDGET', 'Insufficient Storage',
    'memory budget spent, write refused (nothing of it was written): the process holds 5.41 GiB resident of MEMORY_LIMIT 6.00 GiB (writes stop at 90%, 5.40 GiB). ' +
    'Namespaces: default: 310211 documents, 1000342 chunks, 2210877 entities, 5100334 relations, 310211 Episodes. Reads are still answered, deletes still taken. ' +
    'To write more: raise MEMORY_LIMIT and restart; or move to Qdrant + Neo4j (VECTOR_BACKEND=qdrant, GRAPH_BACKEND=neo4j), which hold the chunks and graphs outside this process; ' +
    'or turn derivation off (DERIVED_GRAPH=false, DERIVED_EPISODES=false) and drop the derived part; or delete documents or namespaces you no longer need.')
}
