/**
 * Why the heap release's real-V8 test saw 0.20–0.24x of its gain predicted (issue 44; src/memory/heap-release.ts): the
 * objects it let go at a module's top level were still held by that frame when it called gc(), so the collection freed
 * nothing, the prediction (page pool + unused heap) saw them as heap in use, and the release's own collections freed
 * them. Here ~570 MiB of objects are let go either at the top level (`top`) or in a function (`fn`), and the heap in use
 * is read after gc(), after an await, and after a second gc().
 *
 *   nice -n 19 node --expose-gc --import tsx bench/heap-release-frame.ts top   (and fn)
 */
import { getHeapStatistics } from 'node:v8'

const collect = globalThis.gc
if (!collect) throw new Error('run with --expose-gc')
const used = () => Math.round(getHeapStatistics().used_heap_size / 2 ** 20)
const mode = process.argv[2] === 'fn' ? 'fn' : 'top'
let kept: unknown[][] = []
for (let i = 0; i < 8; i++) {
  const a: unknown[] = []
  for (let j = 0; j < 1e6; j++) a.push({ x: j, y: `k${j}` })
  kept.push(a)
}
if (mode === 'fn') (() => { kept = kept.slice(0, 1) })()
else kept = kept.slice(0, 1)
collect()
const afterGc = used()
await new Promise((resolve) => setTimeout(resolve, 1000))
const afterAwait = used()
collect()
console.log(JSON.stringify({ mode, heap_used_mib: { after_gc: afterGc, after_await: afterAwait, after_second_gc: used() }, kept: kept.length }))
