/**
 * Where a PDF page's images are drawn: pdf.js's operator list walked with its current transformation matrix (`save`,
 * `restore`, `transform`, a form XObject's matrix, an annotation's appearance transform), each painted image's unit
 * square mapped through it to a box on the page, in the page's user space (the units of `page.view`).
 */
import type { getResolvedPDFJS } from 'unpdf'

type Ops = Awaited<ReturnType<typeof getResolvedPDFJS>>['OPS']
/** A 2-D affine matrix `[a, b, c, d, e, f]`: (x, y) → (a·x + c·y + e, b·x + d·y + f), as PDF's `cm` and canvas' `transform`. */
type Matrix = readonly [number, number, number, number, number, number]
/** `[x0, y0, x1, y1]`, x0 ≤ x1, y0 ≤ y1. */
export type Box = [number, number, number, number]

export interface PlacedImage {
  /** `xobject`: an image XObject (its `key` in the page's objects); `inline`: an inline image; `mask`: a stencil mask. */
  kind: 'xobject' | 'inline' | 'mask'
  key?: string
  box: Box
}

const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0]

/** `m` applied first, then `t` (canvas' `t.transform(...m)`). */
function times(t: Matrix, m: Matrix): Matrix {
  const [a, b, c, d, e, f] = m
  return [t[0] * a + t[2] * b, t[1] * a + t[3] * b, t[0] * c + t[2] * d, t[1] * c + t[3] * d, t[0] * e + t[2] * f + t[4], t[1] * e + t[3] * f + t[5]]
}

/** The box the unit square (an image's own space) covers once mapped through `m`. */
function unitBox(m: Matrix): Box {
  const xs = [m[4], m[0] + m[4], m[2] + m[4], m[0] + m[2] + m[4]]
  const ys = [m[5], m[1] + m[5], m[3] + m[5], m[1] + m[3] + m[5]]
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
}

/**
 * Every image a page's operator list paints, in painting order, with its box. The grouped forms pdf.js's optimiser
 * makes of runs of small images (`…Group`, `…Repeat`) are placed image by image.
 */
export function placeImages(list: { fnArray: readonly number[]; argsArray: readonly unknown[] }, OPS: Ops): PlacedImage[] {
  const placed: PlacedImage[] = []
  const stack: Matrix[] = []
  let ctm = IDENTITY
  const put = (kind: PlacedImage['kind'], m: Matrix, key?: string) => placed.push({ kind, ...(key !== undefined ? { key } : {}), box: unitBox(m) })
  for (let i = 0; i < list.fnArray.length; i++) {
    const args = list.argsArray[i] as readonly unknown[]
    const matrix = (at: number) => args[at] as Matrix
    switch (list.fnArray[i]) {
      case OPS.save: stack.push(ctm); break
      case OPS.restore: ctm = stack.pop() ?? ctm; break
      case OPS.transform: ctm = times(ctm, args as Matrix); break
      case OPS.paintFormXObjectBegin: stack.push(ctm); if (args[0]) ctm = times(ctm, matrix(0)); break
      case OPS.paintFormXObjectEnd: ctm = stack.pop() ?? ctm; break
      // an annotation's appearance is drawn from the page's own space: its placement, then its appearance matrix
      case OPS.beginAnnotation: stack.push(ctm); ctm = times(matrix(2), matrix(3)); break
      case OPS.endAnnotation: ctm = stack.pop() ?? ctm; break
      case OPS.paintImageXObject: put('xobject', ctm, args[0] as string); break
      case OPS.paintInlineImageXObject: put('inline', ctm); break
      case OPS.paintImageMaskXObject: case OPS.paintSolidColorImageMask: put('mask', ctm); break
      case OPS.paintImageXObjectRepeat: {
        const [key, sx, sy, at] = args as [string, number, number, ArrayLike<number>]
        for (let k = 0; k + 1 < at.length; k += 2) put('xobject', times(ctm, [sx, 0, 0, sy, at[k]!, at[k + 1]!]), key)
        break
      }
      case OPS.paintImageMaskXObjectRepeat: {
        const [, a, b, c, d, at] = args as [unknown, number, number, number, number, ArrayLike<number>]
        for (let k = 0; k + 1 < at.length; k += 2) put('mask', times(ctm, [a, b, c, d, at[k]!, at[k + 1]!]))
        break
      }
      case OPS.paintImageMaskXObjectGroup:
        for (const image of args[0] as Array<{ transform: Matrix }>) put('mask', times(ctm, image.transform))
        break
      case OPS.paintInlineImageXObjectGroup:
        for (const image of args[1] as Array<{ transform: Matrix }>) put('inline', times(ctm, image.transform))
        break
    }
  }
  return placed
}

/** The share (0 to 1) of the page `view` that the union of `boxes` covers, each box cut to the page first. */
export function coverage(boxes: readonly Box[], view: Box): number {
  const [px0, py0, px1, py1] = view
  const pageArea = (px1 - px0) * (py1 - py0)
  if (pageArea <= 0) return 0
  const cut = boxes
    .map(([x0, y0, x1, y1]): Box => [Math.max(x0, px0), Math.max(y0, py0), Math.min(x1, px1), Math.min(y1, py1)])
    .filter(([x0, y0, x1, y1]) => x1 > x0 && y1 > y0)
  // the union by vertical slabs between consecutive x edges, each slab's y intervals merged
  const xs = [...new Set(cut.flatMap((b) => [b[0], b[2]]))].sort((a, b) => a - b)
  let area = 0
  for (let s = 0; s + 1 < xs.length; s++) {
    const [left, right] = [xs[s]!, xs[s + 1]!]
    const spans = cut.filter((b) => b[0] <= left && b[2] >= right).map((b) => [b[1], b[3]] as const).sort((a, b) => a[0] - b[0])
    let covered = 0
    let end = -Infinity
    for (const [y0, y1] of spans) {
      if (y1 <= end) continue
      covered += y1 - Math.max(y0, end)
      end = y1
    }
    area += covered * (right - left)
  }
  return area / pageArea
}
