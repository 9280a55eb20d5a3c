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
