/**
 * Prints the Node options that size the V8 heap from the memory budget (`--max-old-space-size`,
 * `--heap-growing-percent`, `--external-memory-accounted-in-global-limit`: src/memory/limit.ts), for
 * `scripts/start.sh`; not a heap limit the operator set already in
 * NODE_OPTIONS (node refuses `--heap-growing-percent` there), and nothing when the configuration is bad (the service
 * then says what is wrong as it starts).
 */
import { loadConfig } from '../config.js'
import { heapFlagsFor } from './limit.js'

try {
  const operatorSetHeap = /--max-old-space-size/.test(process.env['NODE_OPTIONS'] ?? '')
  const flags = heapFlagsFor(loadConfig().memory.bytes).filter((flag) => !(operatorSetHeap && flag.startsWith('--max-old-space-size')))
  if (flags.length > 0) process.stdout.write(`${flags.join(' ')}\n`)
} catch { /* the service reports it */ }
