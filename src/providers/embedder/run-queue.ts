import type { EmbeddingBacklog } from './port.js'

/** One ONNX session as the queue sees it: one run at a time. */
export interface RunSlot {
  run(texts: readonly string[]): Promise<Float32Array[]>
}

interface Task {
  texts: readonly string[]
  queuedAt: number
  /** Called at the task's turn: a run whose caller gave up is dropped there (it throws). */
  check: () => void
  resolve: (vectors: Float32Array[]) => void
  reject: (error: unknown) => void
}

/**
 * The one queue in front of every session: a run waits here until a session is free, oldest first. Its backlog
 * (what the overload guard and `/metrics` read) counts the runs waiting for any session, and expects a new one to
 * wait for its place in line times the recent mean run divided by the sessions.
 *
 * `idle`, when given, is a session that takes a run only while it is the only run and every other session is free:
 * a lone caller then skips the round trip to a session process (its two wake-ups cost a lone query about 1.5 ms
 * here), while concurrent runs spread over the sessions.
 */
export class RunQueue {
  readonly #slots: readonly RunSlot[]
  readonly #idle: RunSlot[]
  readonly #alone: RunSlot | undefined
  #aloneBusy = false
  readonly #waiting: Task[] = []
  readonly #runs = new RecentMean(128)

  constructor(slots: readonly RunSlot[], idle?: RunSlot) {
    if (slots.length === 0) throw new RangeError('a run queue needs at least one session')
    this.#slots = slots
    this.#idle = [...slots]
    this.#alone = idle
  }

  get sessions(): number {
    return this.#slots.length
  }

  /** Sessions running now. */
  get busy(): number {
    return this.#slots.length - this.#idle.length + (this.#aloneBusy ? 1 : 0)
  }

  submit(texts: readonly string[], check: () => void = () => undefined): Promise<Float32Array[]> {
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.#waiting.push({ texts, queuedAt: performance.now(), check, resolve, reject })
      this.#dispatch()
    })
  }

  backlog(): EmbeddingBacklog {
    const oldest = this.#waiting[0]
    return {
      queued: this.#waiting.length,
      oldestWaitMs: oldest === undefined ? 0 : performance.now() - oldest.queuedAt,
      expectedWaitMs: (this.#waiting.length * this.#runs.mean) / this.#slots.length
    }
  }

  /** Waits until no run is out or waiting. */
  async drained(): Promise<void> {
    while (this.#waiting.length > 0 || this.busy > 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  #dispatch(): void {
    while (this.#waiting.length > 0) {
      const alone = this.#alone !== undefined && !this.#aloneBusy && this.#waiting.length === 1 && this.busy === 0
      if (!alone && this.#idle.length === 0) return
      const task = this.#waiting.shift()!
      try {
        task.check()
      } catch (error) {
        task.reject(error)
        continue
      }
      if (alone) {
        this.#aloneBusy = true
        this.#start(this.#alone!, task, () => { this.#aloneBusy = false })
      } else {
        const slot = this.#idle.pop()!
        this.#start(slot, task, () => this.#idle.push(slot))
      }
    }
  }

  #start(slot: RunSlot, task: Task, release: () => void): void {
    const started = performance.now()
    slot.run(task.texts).then(
      (vectors) => {
        this.#runs.add(performance.now() - started)
        release()
        this.#dispatch()
        task.resolve(vectors)
      },
      (error: unknown) => {
        release()
        this.#dispatch()
        task.reject(error)
      }
    )
  }
}

/**
 * The mean of the last `size` values, each cut at four times the mean so far: one long pause of the event
 * loop (a collection, a rebuild) moves it a little, a machine that stays slow moves it all the way.
 */
class RecentMean {
  readonly #values: number[] = []
  #next = 0
  #sum = 0

  constructor(readonly size: number) {}

  get mean(): number {
    return this.#values.length === 0 ? 0 : this.#sum / this.#values.length
  }

  add(value: number): void {
    const kept = this.#values.length >= 16 ? Math.min(value, 4 * this.mean) : value
    if (this.#values.length < this.size) {
      this.#values.push(kept)
    } else {
      this.#sum -= this.#values[this.#next]!
      this.#values[this.#next] = kept
      this.#next = (this.#next + 1) % this.size
    }
    this.#sum += kept
  }
}
