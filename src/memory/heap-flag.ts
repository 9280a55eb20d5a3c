/**
 * Prints the Node option that sizes the V8 heap from the memory budget (`--max-old-space-size`, src/memory/limit.ts),
 * for `scripts/start.sh`; nothing when the operator set one already (NODE_OPTIONS) or the configuration is bad (the
 * service then says what is wrong as it starts).
 */
import { loadConfig } from '../config.js'
import { heapMegabytesFor } from './limit.js'

if (!/--max-old-space-size/.test(process.env['NODE_OPTIONS'] ?? '')) {
  try {
    process.stdout.write(`--max-old-space-size=${heapMegabytesFor(loadConfig().memory.bytes)}\n`)
  } catch { /* the service reports it */ }
}
