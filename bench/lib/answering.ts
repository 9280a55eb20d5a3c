/** Milliseconds from `started` until `url` answers 2xx (polled every 20 ms); throws past `limitMs`. */
export async function msUntilAnswering(url: string, started: number, limitMs: number): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return Math.round(performance.now() - started)
    } catch { /* not listening yet */ }
    if (performance.now() - started > limitMs) throw new Error(`${url} did not answer within ${limitMs} ms`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
