import type { EmbeddingBacklog } from './port.js'

/** A run of at most this many texts is short: a query's (a passage batch is longer). */
const SHORT_RUN_TEXTS = 4

/** One ONNX session as the queue sees it: one run at a time. */
export interface RunSlot {
  run(texts: readonly string[]): Promise<Float32Array[]>
}

interface Task {
  texts: readonly string[]
  /** The run may go to the `overflow` session (a query's short run: it holds this thread for a few ms). */
  inline: boolean
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
 *
 * With `pipeline`, a session running a short run (a query's few texts) is also handed the next run while every session
 * is busy: it starts that run as soon as its own ends, instead of waiting for this thread to hear of the end and post
 * the next one, which on a busy event loop left a session idle for about a tenth of the time at 16 clients
 * (bench/results/cpu-bound.json). Nothing waits behind a long run (a batch of passages).
 *
 * `overflow`, when given, is a session on this thread that takes a run submitted as `inline` when no other session
 * can take it now (each busy, with its next run behind it when pipelining), and the last of several sessions takes
 * no inline run: at 16 clients on two cores, queries then keep two threads busy (this one and one session thread)
 * instead of three, and the kept session still embeds passages beside them (bench/results/concurrency.log.md, "A
 * session on the main thread").
 */
export class RunQueue {
  readonly #slots: readonly RunSlot[]
  readonly #idle: RunSlot[]
  /** Sessions running exactly one short run, which may take one more (`pipeline`). */
  readonly #short = new Set<RunSlot>()
  readonly #out = new Map<RunSlot, number>()
  readonly #pipeline: boolean
  readonly #alone: RunSlot | undefined
  #aloneBusy = false
  readonly #overflow: RunSlot | undefined
  #overflowBusy = false
  /** With `overflow` and several sessions, the last one, which takes no inline run: ingestion's, not the queries'. */
  readonly #kept: RunSlot | undefined
  readonly #waiting: Task[] = []
  readonly #runs = new RecentMean(128)

  constructor(slots: readonly RunSlot[], idle?: RunSlot, options: { pipeline?: boolean; overflow?: RunSlot } = {}) {
    if (slots.length === 0) throw new RangeError('a run queue needs at least one session')
    this.#slots = slots
    this.#idle = [...slots]
    this.#alone = idle
    this.#pipeline = options.pipeline ?? false
    this.#overflow = options.overflow
    this.#kept = options.overflow !== undefined && slots.length > 1 ? slots.at(-1) : undefined
  }

  get sessions(): number {
    return this.#slots.length
  }

  /** Sessions running now. */
  get busy(): number {
    return this.#slots.length - this.#idle.length + (this.#aloneBusy ? 1 : 0) + (this.#overflowBusy ? 1 : 0)
  }

  /** `inline`: the run is short enough for the `overflow` session to take (see the class). */
  submit(texts: readonly string[], check: () => void = () => undefined, inline = false): Promise<Float32Array[]> {
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.#waiting.push({ texts, inline, queuedAt: performance.now(), check, resolve, reject })
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
      const next = this.#waiting[0]!
      const slot = this.#place(next)
      if (slot === undefined) return
      this.#waiting.shift()
      try {
        next.check()
      } catch (error) {
        next.reject(error)
        continue
      }
      if (slot === this.#alone) {
        this.#aloneBusy = true
        this.#start(slot, next, () => { this.#aloneBusy = false })
      } else if (slot === this.#overflow) {
        this.#overflowBusy = true
        this.#start(slot, next, () => { this.#overflowBusy = false })
      } else {
        const idle = this.#idle.indexOf(slot)
        if (idle >= 0) this.#idle.splice(idle, 1)
        this.#take(slot, next)
      }
    }
  }

  /** The session that takes `task` now, or none (it waits). */
  #place(task: Task): RunSlot | undefined {
    if (this.#alone !== undefined && !this.#aloneBusy && this.#waiting.length === 1 && this.busy === 0) return this.#alone
    const usable = (slot: RunSlot): boolean => !(task.inline && slot === this.#kept)
    const idle = this.#idle.findLast(usable)
    if (idle !== undefined) return idle
    if (this.#pipeline && task.texts.length <= SHORT_RUN_TEXTS) {
      for (const slot of this.#short) if (usable(slot)) return slot
    }
    if (task.inline && this.#overflow !== undefined && !this.#overflowBusy) return this.#overflow
    return undefined
  }

  #take(slot: RunSlot, task: Task): void {
    const out = (this.#out.get(slot) ?? 0) + 1
    this.#out.set(slot, out)
    if (out === 1 && task.texts.length <= SHORT_RUN_TEXTS) this.#short.add(slot)
    else this.#short.delete(slot)
    this.#start(slot, task, () => {
      const left = this.#out.get(slot)! - 1
      this.#out.set(slot, left)
      // The run still out is the one handed over behind this one: short, so the session may take another.
      if (left === 1) this.#short.add(slot)
      else this.#short.delete(slot)
      if (left === 0) this.#idle.push(slot)
    })
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
