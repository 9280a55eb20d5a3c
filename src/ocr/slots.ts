/** At most `size` holders at once; the others wait in arrival order. */
export class Slots {
  private used = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.take(signal)
    try {
      return await work()
    } finally {
      this.release()
    }
  }

  private take(signal?: AbortSignal): Promise<void> {
    if (this.used < this.size) {
      this.used++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', onAbort)
        this.used++
        resolve()
      }
      const onAbort = () => {
        const at = this.waiting.indexOf(turn)
        if (at >= 0) this.waiting.splice(at, 1)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(turn)
    })
  }

  private release(): void {
    this.used--
    this.waiting.shift()?.()
  }
}
