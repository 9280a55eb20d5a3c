/**
 * The MCP tools of recall. Each takes the body of a REST route (its input schema is that route's TypeBox
 * schema) and runs what the route runs: the same checks, response cache, overload guard, start-up gate and
 * metrics; the namespace scoping of the caller's API key is checked here, before anything is read.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { retrieveAndPack, type ContextDeps } from '../../context/service.js'
import { Errors } from '../../errors.js'
import { documentProblems } from '../../corpus/documents.js'
import { AuthRequiredError, NamespaceForbiddenError } from '../plugins/security.js'
import { assertStarted } from '../plugins/startup-gate.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { MODE_STARTUP_STEPS } from '../../retrieval.js'
import { armsIn, type Comparer } from '../routes/compare.js'
import { AnalyzeBodySchema } from '../../schemas/analyze.js'
import { CompareBodySchema, type CompareBody } from '../../schemas/compare.js'
import { ContextOptionProperties, type ContextBody } from '../../schemas/context.js'
import { IngestDocumentsBodySchema, type IngestDocumentsBody } from '../../schemas/ingest.js'
import { RetrieveBodySchema } from '../../schemas/retrieve.js'
import { analyze } from '../../kernel/cjk-analyzer.js'
import type { StartupStep } from '../../kernel/startup-steps.js'
import { checkArguments, InvalidArgumentsError, jsonSchemaOf } from './arguments.js'
import { recordIngest, writtenOutcome, type IngestRecord } from '../ingest-record.js'

/** `max_tokens` of the `retrieve` tool when the caller gives none: the tool's output must fit a model's input. */
const DEFAULT_TOOL_MAX_TOKENS = 4000

/** `POST /context`'s body, with `max_tokens` optional. */
const RetrieveToolSchema = Type.Object({
  ...RetrieveBodySchema.properties,
  ...ContextOptionProperties,
  max_tokens: Type.Optional(Type.Integer({
    ...ContextOptionProperties.max_tokens,
    description: `${(ContextOptionProperties.max_tokens as { description?: string }).description ?? ''} Default ${DEFAULT_TOOL_MAX_TOKENS}.`
  }))
}, { additionalProperties: false })

const NoArguments = Type.Object({}, { additionalProperties: false })

const NAMESPACE_STEPS: readonly StartupStep[] = ['documents', 'knowledge-graph', 'demo:documents', 'demo:graph', 'demo:episodes']

export interface ToolContext {
  app: FastifyInstance
  request: FastifyRequest
  context: ContextDeps
  compare: Comparer
}

interface ToolDefinition<A> {
  tool: Tool
  schema: TSchema
  /** The namespaces the call reads or writes (checked against the key's scope). */
  namespaces(args: A): string[]
  /** Start-up steps the call waits for. */
  startup(args: A): readonly StartupStep[]
  /** Whether it writes (then it needs a valid key when keys are configured, as REST writes do). */
  writes?: boolean
  run(args: A, ctx: ToolContext): Promise<CallToolResult>
}

const json = (value: unknown): string => JSON.stringify(value, null, 1)
const ofBody = (args: { namespace?: string }) => [args.namespace ?? DEFAULT_NAMESPACE]

const retrieveTool: ToolDefinition<Partial<ContextBody>> = {
  schema: RetrieveToolSchema,
  tool: {
    name: 'retrieve',
    title: 'Retrieve a packed context',
    description: 'Search recall for a question in one mode (`hybrid`: documents by vectors + BM25; `graphrag`: entities named ' +
      'in the question and their relations, with the chunks they cite; `episodic`: past Episodes and the path that explains ' +
      'each). Returns the passages packed within `max_tokens` (default 4000, counted with `tokenizer`) as text, each under a ' +
      'citation marker [n], and the whole recall bundle, citations and manifest as structured content. Takes every option of ' +
      'POST /retrieve and POST /context.',
    inputSchema: jsonSchemaOf(RetrieveToolSchema),
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  namespaces: ofBody,
  startup: (args) => args.mode === 'graphrag' ? [...MODE_STARTUP_STEPS.graphrag, 'documents', 'demo:documents'] : MODE_STARTUP_STEPS[args.mode!],
  async run(args, ctx) {
    const { answer, retrieved } = await retrieveAndPack(ctx.context, { ...args, max_tokens: args.max_tokens ?? DEFAULT_TOOL_MAX_TOKENS } as ContextBody)
    const { context, ...rest } = answer
    const text = context === '' ? `No passages (match_strength ${answer.match_strength}); see the manifest in the structured content.` : context
    return { content: [{ type: 'text', text }], structuredContent: { ...rest, recall_bundle: retrieved.recall_bundle } }
  }
}

const compareTool: ToolDefinition<CompareBody> = {
  schema: CompareBodySchema,
  tool: {
    name: 'compare',
    title: 'Compare modes on one question',
    description: 'Runs one question in two or three arms (a mode and its options each, as POST /retrieve/compare) and says how ' +
      'their answers differ: shared ids, shared evidence chunks, rank agreement.',
    inputSchema: jsonSchemaOf(CompareBodySchema),
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  namespaces: (args) => [...new Set(armsIn(args.arms, args.namespace).map((a) => a.namespace))],
  startup: () => [],
  async run(args, ctx) {
    const answer = await ctx.compare(args.query, args.top_k ?? 10, armsIn(args.arms, args.namespace), 'arguments/arms', ctx.request.log)
    return { content: [{ type: 'text', text: json(answer) }], structuredContent: answer as unknown as Record<string, unknown> }
  }
}

const listNamespacesTool: ToolDefinition<Record<string, never>> = {
  schema: NoArguments,
  tool: {
    name: 'list_namespaces',
    title: 'List namespaces',
    description: 'The namespaces this key may use, with how many documents, chunks, entities, relations and Episodes each holds.',
    inputSchema: jsonSchemaOf(NoArguments),
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  namespaces: () => [],
  startup: () => NAMESPACE_STEPS,
  async run(_args, ctx) {
    const namespaces = await ctx.app.runtime.corpus.namespaces((ns) => ctx.request.mayUseNamespace(ns))
    return { content: [{ type: 'text', text: json({ namespaces }) }], structuredContent: { namespaces } }
  }
}

const analyzeTool: ToolDefinition<{ text: string }> = {
  schema: AnalyzeBodySchema,
  tool: {
    name: 'analyze',
    title: 'Lexical tokens of a text',
    description: 'The tokens the BM25 index makes of a text (NFKC width folding, lowercase, CJK bigrams, English stop words dropped), as POST /analyze.',
    inputSchema: jsonSchemaOf(AnalyzeBodySchema),
    annotations: { readOnlyHint: true, openWorldHint: false }
  },
  namespaces: () => [],
  startup: () => [],
  async run(args) {
    const tokens = analyze(args.text)
    return { content: [{ type: 'text', text: json({ tokens }) }], structuredContent: { tokens } }
  }
}

const ingestTool: ToolDefinition<IngestDocumentsBody> = {
  schema: IngestDocumentsBodySchema,
  writes: true,
  tool: {
    name: 'ingest',
    title: 'Add or replace documents',
    description: 'Adds or replaces documents (Markdown or text) in a namespace\'s hybrid corpus, as POST /ingest/documents: ' +
      'each is chunked, embedded and indexed; re-ingesting an id replaces it.',
    inputSchema: jsonSchemaOf(IngestDocumentsBodySchema),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  },
  namespaces: ofBody,
  startup: () => ['documents', 'demo:documents'],
  async run(args, ctx) {
    const namespace = args.namespace ?? DEFAULT_NAMESPACE
    const record = (fields: Omit<IngestRecord, 'namespace'>) => recordIngest(ctx.request.log, ctx.app.metrics, { namespace, ...fields })
    const nothing = { documents: 0, chunks: 0, replaced: 0, unchanged: 0 }
    const started = performance.now()
    const problems = documentProblems(args.documents)
    if (problems.length > 0) {
      record({ outcome: 'refused', ...nothing, refused: args.documents.length, ms: performance.now() - started, error: problems.join('; ') })
      throw new Errors.invalidIngest(problems.join('; '))
    }
    const summary = await ctx.app.runtime.corpus.write(namespace, { kind: 'documents', op: 'upsert', documents: args.documents }).catch((error: unknown) => {
      record({ outcome: 'failed', ...nothing, refused: 0, ms: performance.now() - started, error: (error as Error).message })
      throw error
    })
    record({ outcome: writtenOutcome(summary.documents, summary.unchanged), documents: summary.documents, chunks: summary.chunks, replaced: summary.replaced, unchanged: summary.unchanged, refused: 0, ms: summary.took_ms })
    return { content: [{ type: 'text', text: json(summary) }], structuredContent: summary as unknown as Record<string, unknown> }
  }
}

/** The tools this service offers: the read-only ones, and `ingest` when the operator turned it on. */
export function recallTools(ingest: boolean): ToolDefinition<never>[] {
  const read = [retrieveTool, compareTool, listNamespacesTool, analyzeTool] as unknown as ToolDefinition<never>[]
  return ingest ? [...read, ingestTool as unknown as ToolDefinition<never>] : read
}

/**
 * Runs a `tools/call`. Arguments the schema refuses, and a 400 of the route behind the tool, are the protocol's
 * invalid-params error; any other refusal (401, 403, 429, 503) is a tool error whose text is the REST error body.
 */
export async function callTool(tools: readonly ToolDefinition<never>[], name: string, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const tool = tools.find((t) => t.tool.name === name)
  if (!tool) throw new InvalidArgumentsError(`unknown tool ${JSON.stringify(name)}; the tools are ${tools.map((t) => t.tool.name).join(', ')}`)
  const { app, request } = ctx
  let checked: never
  try {
    checked = checkArguments<never>(name, tool.schema, args)
  } catch (error) {
    app.metrics.toolCall(name, 'invalid')
    throw error
  }
  try {
    if (tool.writes && app.runtime.config.security.apiKeys.length > 0 && !request.hasValidApiKey()) throw new AuthRequiredError()
    const refused = tool.namespaces(checked).find((ns) => !request.mayUseNamespace(ns))
    if (refused !== undefined) throw new NamespaceForbiddenError(JSON.stringify(refused))
    assertStarted(app.runtime.startup, tool.startup(checked))
    const result = await tool.run(checked, ctx)
    app.metrics.toolCall(name, 'ok')
    return result
  } catch (error) {
    const body = app.errorAnswer(error as FastifyError, request.log)
    if (body.statusCode === 400) {
      app.metrics.toolCall(name, 'invalid')
      throw new InvalidArgumentsError(`${name}: ${body.message}`)
    }
    app.metrics.toolCall(name, 'error')
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body }
  }
}
