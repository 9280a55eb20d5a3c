import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { callTool, recallTools, type ToolContext } from '../mcp/tools.js'
import { comparer } from './compare.js'
import { contextDeps } from './context.js'

const MCP_SERVER_INFO = { name: 'recall', version: '0.1.0' }

const INSTRUCTIONS = 'recall retrieves evidence for generation. Call `retrieve` with a question, a `mode` (hybrid for ' +
  'documents, graphrag for entities and relations, episodic for past Episodes) and a `max_tokens` budget: the text is ' +
  'ready to paste into a prompt, with [n] markers to cite. `list_namespaces` says what each namespace holds.'

/** The web Request the SDK's transport reads: the same method, URL and headers; the body is handed over parsed. */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  return new Request(new URL(request.url, `http://${request.host || 'localhost'}`), { method: request.method, headers })
}

/**
 * `/mcp`: a Model Context Protocol server over streamable HTTP, stateless (a server and transport per POST,
 * JSON answers, no session), so any replica answers any call. It sits behind the same hooks as every route:
 * API keys, rate limit, overload guard, request metrics; the tools check namespace scopes themselves.
 */
const mcpRoutes: FastifyPluginAsync = async (app) => {
  const tools = recallTools(app.runtime.config.mcp.ingestTool)
  const context = contextDeps(app)
  const compare = comparer(app)

  const answer = async (request: FastifyRequest, reply: FastifyReply) => {
    const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
    const ctx: ToolContext = { app, request, context, compare }
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.tool) }))
    server.setRequestHandler(CallToolRequestSchema, async (call) => callTool(tools, call.params.name, call.params.arguments, ctx))
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    try {
      await server.connect(transport)
      const response = await transport.handleRequest(webRequest(request), { parsedBody: request.body })
      void reply.code(response.status)
      response.headers.forEach((value, name) => { void reply.header(name, value) })
      return reply.send(await response.text())
    } finally {
      await server.close()
    }
  }

  const hidden = { hide: true }
  app.post('/mcp', { schema: hidden }, answer)
  // Stateless: no server-to-client stream to open and no session to end.
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', 'POST').send({
    statusCode: 405, code: 'RECALL_METHOD_NOT_ALLOWED', error: 'Method Not Allowed', message: 'this MCP server is stateless: send JSON-RPC messages with POST /mcp'
  })
  app.get('/mcp', { schema: hidden }, notAllowed)
  app.delete('/mcp', { schema: hidden }, notAllowed)
}

export default mcpRoutes
