import { once } from 'node:events'
import { createServer } from 'node:net'

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; the caller binds it next). */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('could not obtain a free port')
  return address.port
}
