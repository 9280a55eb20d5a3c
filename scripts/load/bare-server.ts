// The bare Fastify route the cached path is compared with (run as a child of scripts/load.ts).
// It is sent the exact bodies to serve over IPC, answers `ready` with its URL, and serves
//   GET /bare/:i   body i, as stored bytes (what the cached path sends, byte for byte)
//   GET /ascii     an ASCII JSON body of a given size (the same size, with content cheap for the client)
import Fastify from 'fastify'

interface Setup {
  bodies: string[]
  asciiBytes: number
}

async function serve(setup: Setup): Promise<string> {
  const app = Fastify({ logger: false })
  const bodies = setup.bodies.map((body) => Buffer.from(body, 'base64'))
  const ascii = Buffer.from(JSON.stringify({ data: 'x'.repeat(Math.max(0, setup.asciiBytes - 11)) }))
  app.get<{ Params: { i: string } }>('/bare/:i', async (request, reply) =>
    reply.type('application/json; charset=utf-8').send(bodies[Number(request.params.i)] ?? ascii))
  app.get('/ascii', async (_request, reply) => reply.type('application/json; charset=utf-8').send(ascii))
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
  return app.listen({ port: 0, host: '127.0.0.1' })
}

process.once('message', (setup: Setup) => {
  serve(setup).then((url) => process.send?.({ ready: url }), (error: unknown) => {
    console.error('bare server:', error)
    process.exit(1)
  })
})
