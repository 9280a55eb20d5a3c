import type { FastifyPluginAsync } from 'fastify'
export default (async () => {}) as FastifyPluginAsync
