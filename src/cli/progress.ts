/** A one-line progress bar on stderr; on a non-terminal it prints a line per step instead. */
export class ProgressBar {
  private done_ = 0
  private readonly started = performance.now()

  constructor(private readonly total: number, private readonly unit: string, private readonly stream = process.stderr) {}

  advance(by: number, note = ''): void {
    this.done_ = Math.min(this.total, this.done_ + by)
    const width = 30
    const filled = Math.round((this.done_ / Math.max(1, this.total)) * width)
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1)
    const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done_}/${this.total} ${this.unit} ${note} ${seconds}s`
    if (this.stream.isTTY) this.stream.write(`\r${line}`)
    else this.stream.write(`${line}\n`)
  }

  done(): void {
    if (this.stream.isTTY) this.stream.write('\n')
  }
}

/**
 * A status line on stderr, drawn from `render` every `everyMs` (default a second) while it runs: on a terminal redrawn
 * in place (and at every `refresh`), elsewhere (a pipe, a log) printed as a new line each time, so a long run shows
 * progress at a steady pace without flooding.
 */
export class StatusLine {
  private readonly timer: NodeJS.Timeout
  private shown = false

  constructor(private readonly render: () => string, private readonly stream: NodeJS.WriteStream = process.stderr, everyMs = 1000) {
    this.timer = setInterval(() => this.print(), everyMs)
    this.timer.unref()
  }

  /** Redraws now on a terminal (the next tick elsewhere). */
  refresh(): void {
    if (this.stream.isTTY) this.print()
  }

  /** Stops; prints the last state, and ends the line. */
  done(): void {
    clearInterval(this.timer)
    this.print()
    if (this.stream.isTTY) this.stream.write('\n')
  }

  private print(): void {
    const line = this.render()
    if (this.stream.isTTY) this.stream.write(`\r${line}\x1b[K`)
    else this.stream.write(`${line}\n`)
    this.shown = true
  }
}

/** `1h02m`, `3m05s`, `42s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}
