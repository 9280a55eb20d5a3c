/** The embedded vector store's search kernels: dot products of a query with every matrix row, in WebAssembly SIMD (float32 and int8). */

export const WASM_PAGE_BYTES = 65_536

// The compiler's lib has no WebAssembly declarations (no DOM lib); these are the few members used here.
export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
type WasmModule = object
export const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number }) => WasmMemory
      Module: new (bytes: Uint8Array) => WasmModule
      Instance: new (module: WasmModule, imports: object) => { exports: unknown }
    }
  }
).WebAssembly

/** Bytes of WebAssembly pages for a query row, `rows` matrix rows and `rows` scores. */
export function pagesFor(stride: number, rows: number): number {
  return Math.ceil((stride * 4 * (1 + rows) + rows * 4) / WASM_PAGE_BYTES)
}

export interface DotKernel {
  /** scores[r] = dot(matrix row r, query) for r < rows; pointers are byte offsets, `stride` a multiple of 8. */
  dots(matrixAt: number, queryAt: number, rows: number, stride: number, scoresAt: number): void
}

let dotModule: WasmModule | undefined
let int8Module: WasmModule | undefined

/**
 * The search kernel, hand-assembled WebAssembly SIMD: two f32x4 accumulators per row. Plain JS does
 * 10k x 512 in ~20 ms on this machine; this does it in ~1 ms (bench/results/vector-store.json).
 *
 * (func (export "dots") (param $mat i32) (param $q i32) (param $n i32) (param $d i32) (param $out i32)
 *   for row < n: acc0, acc1 = 0; for j < d*4 step 32: acc0 += mat[p+j..] * q[j..]; acc1 += mat[p+j+16..] * q[j+16..]
 *   out[row] = lanes of (acc0 + acc1) summed 0+1+2+3; p += d*4)
 */
export function instantiateDotKernel(memory: WasmMemory): DotKernel {
  dotModule ??= kernelModule(5, `
      02 04 7f 02 7b
      20 03 41 02 74 21 08
      20 00 21 07
      02 40 03 40
        20 05 20 02 4f 0d 01
        fd 0c ${ZERO16} 21 09 fd 0c ${ZERO16} 21 0a
        41 00 21 06
        02 40 03 40
          20 06 20 08 4f 0d 01
          20 09 20 07 20 06 6a fd 00 04 00 20 01 20 06 6a fd 00 04 00 fd e6 01 fd e4 01 21 09
          20 0a 20 07 20 06 6a fd 00 04 10 20 01 20 06 6a fd 00 04 10 fd e6 01 fd e4 01 21 0a
          20 06 41 20 6a 21 06
          0c 00
        0b 0b
        20 04 20 05 41 02 74 6a
        20 09 20 0a fd e4 01 21 09
        20 09 fd 1f 00 20 09 fd 1f 01 92 20 09 fd 1f 02 92 20 09 fd 1f 03 92
        38 02 00
        20 07 20 08 6a 21 07
        20 05 41 01 6a 21 05
        0c 00
      0b 0b 0b`)
  return new wasm.Instance(dotModule, { env: { memory } }).exports as unknown as DotKernel
}

export interface Int8DotKernel {
  /**
   * scores[r] = dot(int8 matrix row r, int8 query) as f32, times the f32 at `scalesAt + 4r`, for r < rows; pointers are
   * byte offsets, `stride` (bytes a row) a multiple of 16.
   */
  dots(matrixAt: number, queryAt: number, rows: number, stride: number, scoresAt: number, scalesAt: number): void
}

/**
 * The int8 scan: each 16-byte step sign-extends both halves of the row and the query to i16 and adds their
 * `i32x4.dot_i16x8_s` to one i32x4 accumulator (exact: |sum| <= 127 x 127 x dims fits an i32).
 *
 * (func (export "dots") (param $mat $q $n $d $out $scales i32) (local $j $p $row i32) (local $acc $a $b v128)
 *   for row < n: acc = 0; for j < d step 16: a = mat[p+j..]; b = q[j..];
 *     acc += dot(low(a), low(b)) + dot(high(a), high(b))
 *   out[row] = f32(lanes of acc summed) * scales[row]; p += d)
 */
export function instantiateInt8Kernel(memory: WasmMemory): Int8DotKernel {
  int8Module ??= kernelModule(6, `
      02 03 7f 03 7b
      20 00 21 07
      02 40 03 40
        20 08 20 02 4f 0d 01
        fd 0c ${ZERO16} 21 09
        41 00 21 06
        02 40 03 40
          20 06 20 03 4f 0d 01
          20 07 20 06 6a fd 00 04 00 21 0a
          20 01 20 06 6a fd 00 04 00 21 0b
          20 09
          20 0a fd 87 01 20 0b fd 87 01 fd ba 01 fd ae 01
          20 0a fd 88 01 20 0b fd 88 01 fd ba 01 fd ae 01
          21 09
          20 06 41 10 6a 21 06
          0c 00
        0b 0b
        20 04 20 08 41 02 74 6a
        20 09 fd 1b 00 20 09 fd 1b 01 6a 20 09 fd 1b 02 6a 20 09 fd 1b 03 6a
        b2
        20 05 20 08 41 02 74 6a 2a 02 00
        94
        38 02 00
        20 07 20 03 6a 21 07
        20 08 41 01 6a 21 08
        0c 00
      0b 0b 0b`)
  return new wasm.Instance(int8Module, { env: { memory } }).exports as unknown as Int8DotKernel
}

const ZERO16 = Array(16).fill('00').join(' ')

/** A module importing `env.memory` and exporting one function "dots" of `params` i32 parameters and no result. */
function kernelModule(params: number, bodyHex: string): WasmModule {
  const body = hexBytes(bodyHex)
  const section = (id: number, bytes: number[]): number[] => [id, ...uleb128(bytes.length), ...bytes]
  return new wasm.Module(
    new Uint8Array([
      ...hexBytes('00 61 73 6d 01 00 00 00'),
      ...section(1, [0x01, 0x60, params, ...Array<number>(params).fill(0x7f), 0x00]), // type: (i32 x params) -> ()
      ...section(2, hexBytes('01 03 65 6e 76 06 6d 65 6d 6f 72 79 02 00 00')), // import env.memory
      ...section(3, [1, 0]),
      ...section(7, hexBytes('01 04 64 6f 74 73 00 00')), // export "dots"
      ...section(10, [1, ...uleb128(body.length), ...body])
    ])
  )
}

function hexBytes(text: string): number[] {
  return text.trim().split(/\s+/).map((h) => Number.parseInt(h, 16))
}

function uleb128(value: number): number[] {
  const out: number[] = []
  let n = value
  do {
    let byte = n & 0x7f
    n >>>= 7
    if (n !== 0) byte |= 0x80
    out.push(byte)
  } while (n !== 0)
  return out
}
