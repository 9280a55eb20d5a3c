/**
 * A V8 `.cpuprofile` (node --cpu-prof) as a flame graph in SVG: one box per call path, as wide as the samples that
 * path took, callers below callees; plus the self time per function, to rank what the process spends its CPU on.
 * Only the samples inside a time window count (a server's load, not its start-up).
 */

interface CpuProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
}

export interface CpuProfile {
  nodes: CpuProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

interface Frame { name: string; total: number; self: number; children: Map<string, Frame> }

/** A frame's label: the function and the file it is in, the repository's own path or the package's. */
function frameLabel(frame: CpuProfileNode['callFrame']): string {
  const fn = frame.functionName || '(anonymous)'
  if (!frame.url) return fn
  const url = frame.url.replace(/^file:\/\//, '')
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  const where = pkg ? pkg[1]! : url.includes('/src/') || url.includes('/adapters/') ? url.replace(/^.*?\/((?:src|adapters)\/.*)$/, '$1') : url.replace(/^.*\//, '')
  return `${fn} ${where}:${frame.lineNumber + 1}`
}

/** The samples whose time (µs since the profile's start) is in [fromUs, toUs), as a call tree counted in samples. */
export function callTree(profile: CpuProfile, fromUs = 0, toUs = Number.POSITIVE_INFINITY): { root: Frame; samples: number; sampleUs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const root: Frame = { name: 'all', total: 0, self: 0, children: new Map() }
  let t = 0
  let kept = 0
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0
    if (t < fromUs || t >= toUs) continue
    const path: string[] = []
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id)!
      if (node.callFrame.functionName === '(root)') break
      path.push(frameLabel(node.callFrame))
    }
    // idle time is not CPU spent: the main thread waited (on I/O, timers, or the ONNX threads)
    if (path[0] === '(idle)') continue
    kept++
    let at = root
    at.total++
    for (let d = path.length - 1; d >= 0; d--) {
      const name = path[d]!
      let child = at.children.get(name)
      if (!child) at.children.set(name, (child = { name, total: 0, self: 0, children: new Map() }))
      child.total++
      at = child
    }
    at.self++
  }
  const span = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length)
  return { root, samples: kept, sampleUs: span }
}

/** Self samples per function label over the whole tree, largest first. */
export function selfByFunction(root: Frame): [string, number][] {
  const totals = new Map<string, number>()
  const walk = (f: Frame) => {
    if (f.self > 0) totals.set(f.name, (totals.get(f.name) ?? 0) + f.self)
    for (const c of f.children.values()) walk(c)
  }
  walk(root)
  return [...totals].sort((a, b) => b[1] - a[1])
}

/** Inclusive samples of every frame whose label matches, counted once per sample path (outermost match). */
export function inclusive(root: Frame, match: (label: string) => boolean): number {
  let n = 0
  const walk = (f: Frame) => {
    if (f !== root && match(f.name)) { n += f.total; return }
    for (const c of f.children.values()) walk(c)
  }
  walk(root)
  return n
}

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** Colour by where the frame lives: ours, onnxruntime / transformers, fastify and the rest of node_modules, node. */
function colour(name: string): string {
  if (/onnxruntime|transformers/.test(name)) return '#e8a23b'
  if (/ (src|adapters)\//.test(name)) return '#4f9bd9'
  if (/fastify|pino|ajv|fast-json|avvio|find-my-way|light-my-request/.test(name)) return '#9c7bd1'
  if (/ [@a-z0-9-]+(\/[a-z0-9-]+)?:\d+$/.test(name) && !/ node:/.test(name)) return '#8fbf6a'
  return '#c7c7c7'
}

/** The tree as an SVG flame graph `width` pixels wide; boxes narrower than a pixel are left out. */
export function flameSvg(tree: { root: Frame; samples: number; sampleUs: number }, title: string, subtitle: string, width = 1200): string {
  const rowH = 16
  let depth = 0
  const boxes: string[] = []
  const scale = (width - 20) / Math.max(1, tree.root.total)
  const place = (f: Frame, x: number, d: number) => {
    depth = Math.max(depth, d)
    const w = f.total * scale
    if (w < 1) return
    boxes.push(`<g><title>${escape(f.name)}: ${f.total} samples (${(100 * f.total / tree.root.total).toFixed(1)}%), self ${f.self}</title>` +
      `<rect x="${(10 + x).toFixed(1)}" y="__Y${d}__" width="${w.toFixed(1)}" height="${rowH - 1}" fill="${colour(f.name)}" rx="2"/>` +
      (w > 40 ? `<text x="${(13 + x).toFixed(1)}" y="__T${d}__" font-size="10" font-family="monospace">${escape(f.name.slice(0, Math.floor((w - 6) / 6)))}</text>` : '') + '</g>')
    let cx = x
    for (const c of [...f.children.values()].sort((a, b) => b.total - a.total)) {
      place(c, cx, d + 1)
      cx += c.total * scale
    }
  }
  place(tree.root, 0, 0)
  const top = 50
  const height = top + (depth + 1) * rowH + 30
  // callers at the bottom, callees above them (a flame graph)
  const y = (d: number) => height - 30 - (d + 1) * rowH
  const body = boxes.join('\n').replace(/__Y(\d+)__/g, (_, d) => String(y(Number(d)))).replace(/__T(\d+)__/g, (_, d) => String(y(Number(d)) + 11))
  const legend = [['ours (src/, adapters/)', '#4f9bd9'], ['onnxruntime / transformers.js', '#e8a23b'], ['fastify, pino, ajv, serialisers', '#9c7bd1'], ['other packages', '#8fbf6a'], ['node / V8', '#c7c7c7']]
    .map(([label, c], i) => `<rect x="${10 + i * 230}" y="${height - 20}" width="12" height="12" fill="${c}"/><text x="${26 + i * 230}" y="${height - 10}" font-size="11" font-family="sans-serif">${escape(label!)}</text>`).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="20" font-size="15" font-family="sans-serif" font-weight="bold">${escape(title)}</text>
<text x="10" y="38" font-size="11" font-family="sans-serif">${escape(subtitle)}</text>
${body}
${legend}
</svg>
`
}
