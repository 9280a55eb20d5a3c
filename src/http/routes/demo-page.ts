import { readFile } from 'node:fs/promises'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { demoDir } from '../../corpus/demo.js'

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'demo.css': 'text/css; charset=utf-8',
  'demo.js': 'text/javascript; charset=utf-8'
} as const

/**
 * The comparison page at `/demo`: plain HTML, CSS and a script from `demo/page/`, read once at start.
 * Hidden from the OpenAPI document; it only calls `POST /retrieve/compare`.
 */
const demoPage: FastifyPluginAsync = async (app) => {
  const dir = `${demoDir()}page/`
  const files = new Map<string, Buffer>()
  for (const name of Object.keys(FILES)) files.set(name, await readFile(`${dir}${name}`))
  const send = (name: keyof typeof FILES) => async (_request: unknown, reply: FastifyReply) =>
    reply.type(FILES[name]).header('cache-control', 'no-cache').send(files.get(name))
  app.get('/demo', { schema: { hide: true } }, send('index.html'))
  app.get('/demo/', { schema: { hide: true } }, send('index.html'))
  app.get('/demo/demo.css', { schema: { hide: true } }, send('demo.css'))
  app.get('/demo/demo.js', { schema: { hide: true } }, send('demo.js'))
}

export default demoPage
