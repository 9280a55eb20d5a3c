/**
 * Run as a child by test/startup.test.ts: a start-up closed before its steps ran, then `settled()`. Prints `settled`
 * when it resolves; a `settled()` that spins holds this process's event loop, and the test kills it.
 */
import { Startup } from '../../src/startup.js'

const startup = new Startup<string>()
startup.add({ name: 'library', doing: 'opening', run: async () => undefined })
startup.add({ name: 'demo', doing: 'loading', after: ['library'], run: async () => undefined })
await startup.close()
await startup.settled()
process.stdout.write('settled\n')
