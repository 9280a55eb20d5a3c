/**
 * The MCP tools of recall. Each takes the body of a REST route (its input schema is that route's TypeBox
 * schema) and runs what the route runs: the same checks, response cache, overload guard, start-up gate and
 * metrics; the namespace scoping of the caller's API key is checked here, before anything is read.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type Static, type TSchema } from 'typebox'
import { retrieveAndPack, type ContextDeps } from '../../context/service.js'
import { Errors } from '../../errors.js'
import { ConversationIngestError, ConversationSchema, SessionSchema, TurnSchema } from '../../corpus/conversations/body.js'
import { NamespaceSchema } from '../../schemas/common.js'
import { DocumentIngestError, prepareDocuments, type PreparedDocuments } from '../../corpus/documents-body.js'
import { AuthRequiredError, NamespaceForbiddenError } from '../plugins/security.js'
import { assertStarted } from '../plugins/startup-gate.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { MODE_STARTUP_STEPS } from '../../retrieval.js'
import { armsIn, type Comparer } from '../routes/compare.js'
import { AnalyzeBodySchema } from '../../schemas/analyze.js'
import { CompareBodySchema, type CompareBody } from '../../schemas/compare.js'
import { ContextOptionProperties, type ContextBody } from '../../schemas/context.js'
import { IngestDocumentsBodySchema, IngestDocumentsEnvelopeSchema, type IngestDocumentsBody } from '../../schemas/ingest.js'
import { RetrieveBodySchema } from '../../schemas/retrieve.js'
import { analyze } from '../../kernel/cjk-analyzer.js'
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import { checkArguments, InvalidArgumentsError, jsonSchemaOf } from './arguments.js'
import { recordIngest, writtenOutcome, type IngestRecord } from '../../ingest-record.js'

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
  // the documents are judged one by one in run() (`on_invalid` defaults to `skip` here); the published schema is the route's
  schema: IngestDocumentsEnvelopeSchema,
  writes: true,
  tool: {
    name: 'ingest',
    title: 'Add or replace documents',
    description: 'Adds or replaces documents (Markdown or text) in a namespace\'s hybrid corpus, as POST /ingest/documents: ' +
      'each is chunked, embedded and indexed; re-ingesting an id replaces it. An invalid document is answered in `refused` with ' +
      'its reason and the others are written (`on_invalid` defaults to `skip` here; `reject` refuses the whole call); a document ' +
      'that gives no text to index is answered in `skipped`.',
    inputSchema: jsonSchemaOf(IngestDocumentsBodySchema),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  },
  namespaces: ofBody,
  startup: () => ['documents', 'demo:documents', ...WRITE_STEPS],
  async run(args, ctx) {
    const namespace = args.namespace ?? DEFAULT_NAMESPACE
    const record = (fields: Omit<IngestRecord, 'namespace'>) => recordIngest(ctx.request.log, ctx.app.metrics, { namespace, ...fields })
    const nothing = { documents: 0, chunks: 0, replaced: 0, unchanged: 0 }
    const started = performance.now()
    let prepared: PreparedDocuments
    try {
      prepared = prepareDocuments({ ...args, on_invalid: args.on_invalid ?? 'skip' })
    } catch (error) {
      if (!(error instanceof DocumentIngestError)) throw error
      record({ outcome: 'refused', ...nothing, refused: args.documents.length, ms: performance.now() - started, error: error.problems.join('; ') })
      throw new Errors.invalidIngest(error.problems.join('; '))
    }
    const { documents, refused, normalised } = prepared
    const told = { ...(args.on_invalid !== 'reject' ? { refused } : {}), ...(normalised.length > 0 ? { normalised } : {}) }
    let summary
    if (documents.length === 0) {
      record({ outcome: 'refused', ...nothing, refused: refused.length, ms: performance.now() - started })
      summary = { ...nothing, unchanged_ids: [], ...told, took_ms: Math.round((performance.now() - started) * 100) / 100 }
    } else {
      const written = await ctx.app.runtime.corpus.write(namespace, { kind: 'documents', op: 'upsert', documents }).catch((error: unknown) => {
        record({ outcome: 'failed', ...nothing, refused: refused.length, ms: performance.now() - started, error: (error as Error).message })
        throw error
      })
      record({ outcome: writtenOutcome(written.documents, written.unchanged), documents: written.documents, chunks: written.chunks, replaced: written.replaced, unchanged: written.unchanged, refused: refused.length, ms: written.took_ms, ...(written.images ? { images: written.images } : {}) })
      summary = { ...written, ...told }
    }
    return { content: [{ type: 'text', text: json(summary) }], structuredContent: summary as unknown as Record<string, unknown> }
  }
}

/** `remember`'s arguments: turns of one session of one conversation (docs/conversations.md). */
const RememberToolSchema = Type.Object({
  namespace: Type.Optional(NamespaceSchema),
  conversation: ConversationSchema.properties.id,
  session: SessionSchema.properties.id,
  time: SessionSchema.properties.time,
  turns: Type.Array(TurnSchema, { minItems: 1, description: 'Turns to add to the session (a turn id it holds already is replaced in place).' })
}, { additionalProperties: false })
type RememberArguments = Static<typeof RememberToolSchema>

const rememberTool: ToolDefinition<RememberArguments> = {
  schema: RememberToolSchema,
  writes: true,
  tool: {
    name: 'remember',
    title: 'Remember turns of a conversation',
    description: 'Appends turns to a session of a conversation in a namespace\'s episodic memory, as POST /ingest/conversations ' +
      'with one session: the other turns and sessions are kept, only the new turns are embedded. Later, retrieve with ' +
      '`mode: episodic` answers with the turns (speaker and time) that bear on a question.',
    inputSchema: jsonSchemaOf(RememberToolSchema),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  },
  namespaces: ofBody,
  startup: () => ['embedder', 'episodes:journal', ...WRITE_STEPS],
  async run(args, ctx) {
    const body = { conversations: [{ id: args.conversation, sessions: [{ id: args.session, time: args.time, turns: args.turns }] }] }
    try {
      const written = await ctx.app.runtime.corpus.write(args.namespace ?? DEFAULT_NAMESPACE, { kind: 'conversations', op: 'upsert', body })
      return { content: [{ type: 'text', text: json(written) }], structuredContent: written as unknown as Record<string, unknown> }
    } catch (error) {
      if (error instanceof ConversationIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
  }
}

/** The tools this service offers: the read-only ones, and `ingest` and `remember` when the operator turned writes on. */
export function recallTools(ingest: boolean): ToolDefinition<never>[] {
  const read = [retrieveTool, compareTool, listNamespacesTool, analyzeTool] as unknown as ToolDefinition<never>[]
  return ingest ? [...read, ...[ingestTool, rememberTool] as unknown as ToolDefinition<never>[]] : read
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
