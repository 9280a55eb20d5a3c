import { errorMessage } from './providers/errors.js'
import type { StartupStep } from './kernel/startup-steps.js'

type StepState = 'pending' | 'running' | 'done' | 'retrying'

/** One start-up step as `/readyz` reports it. */
export interface StepReport {
  name: string
  state: StepState
  /** What the step does now, how far it got, or why its last attempt failed. */
  detail: string
  attempts: number
  /** When the step waits to be tried again: in how many milliseconds. */
  retry_in_ms?: number
}

/** `N`: the names steps may have; the service's are `StartupStep` (tests use their own). */
export interface StepDefinition<N extends string = StartupStep> {
  name: N
  /** What the step does, in words, while it runs (`loading the embedding model`). */
  doing: string
  /** Steps that must have succeeded before this one starts. */
  after?: readonly N[]
  /**
   * Whether requests that need this step wait until it has succeeded (`true`), or only until its first
   * attempt has ended (`false`, the default): afterwards a failed backend answers for itself, with a 503
   * naming it or a degraded leg, while the step keeps being retried.
   */
  required?: boolean
  /**
   * A check that comes before any other work (`true`): every other step starts only once this one has
   * succeeded or failed an attempt in a way retrying may fix. After a fatal failure no other step starts.
   */
  first?: boolean
  /** Releases what the step holds (a registration with a lease) when start-up closes; `close()` awaits it. */
  stop?(): Promise<void>
  /** Does the work; `progress` says how far it got. Resolves with a line for the log, or nothing. */
  run(progress: (detail: string) => void): Promise<string | void>
}

export interface StartupLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

export interface StartupOptions {
  logger?: StartupLogger
  /** First retry delay, doubled after each failure up to `maxRetryMs`. Default 1,000 ms. */
  firstRetryMs?: number
  /** Longest delay between attempts. Default 30,000 ms. */
  maxRetryMs?: number
  /**
   * Called when a step fails with an error marked `fatal: true` (a store that retrying cannot fix, such as a
   * collection written with other lexical settings); that step is then not retried. The server exits there.
   */
  onFatal?: (step: string, error: Error) => void
}

/** Least time between two progress lines of one step in the log, in milliseconds. */
const PROGRESS_LOG_MS = 2_000

interface Step {
  definition: StepDefinition<string>
  state: StepState
  detail: string
  attempts: number
  retryAt?: number
  /** Why the last attempt failed: said again while the next one runs, so that a retry does not hide the reason. */
  lastFailure?: string
  /** Resolves once the first attempt has ended, whatever its outcome. */
  firstAttempt: Promise<void>
  endFirstAttempt: () => void
  succeeded: Promise<void>
  succeed: () => void
  /** Resolves once the step has succeeded or failed an attempt that is not fatal (what `first` steps hold others for). */
  passed: Promise<void>
  pass: () => void
  hasPassed: boolean
  timer?: NodeJS.Timeout
}

/**
 * The service's start-up work (loading the model, opening the stores, loading the demo world), run after
 * the server listens. Each step runs once its predecessors have succeeded and is retried with capped
 * exponential backoff until it succeeds, so a backend that is down at start-up delays only what needs it.
 */
export class Startup<N extends string = StartupStep> {
  readonly #steps = new Map<string, Step>()
  readonly #logger: StartupLogger | undefined
  readonly #firstRetryMs: number
  readonly #maxRetryMs: number
  readonly #onFatal: StartupOptions['onFatal']
  #started = false
  #closed = false

  constructor(options: StartupOptions = {}) {
    this.#logger = options.logger
    this.#firstRetryMs = options.firstRetryMs ?? 1_000
    this.#maxRetryMs = options.maxRetryMs ?? 30_000
    this.#onFatal = options.onFatal
  }

  /** Adds a step; after `start()` it is started at once. */
  add(definition: StepDefinition<N>): void {
    if (this.#steps.has(definition.name)) throw new Error(`start-up step ${definition.name} is defined twice`)
    let endFirstAttempt!: () => void
    let succeed!: () => void
    let pass!: () => void
    const firstAttempt = new Promise<void>((resolve) => { endFirstAttempt = resolve })
    const succeeded = new Promise<void>((resolve) => { succeed = resolve })
    const passed = new Promise<void>((resolve) => { pass = resolve })
    const step: Step = {
      definition, state: 'pending', detail: 'waiting to start', attempts: 0, firstAttempt, endFirstAttempt, succeeded, succeed, passed, hasPassed: false,
      pass: () => {
        step.hasPassed = true
        pass()
      }
    }
    this.#steps.set(definition.name, step)
    if (this.#started) void this.#launch(step)
  }

  has(name: N): boolean {
    return this.#steps.has(name)
  }

  /** Starts every step (once). */
  start(): void {
    if (this.#started) return
    this.#started = true
    for (const step of this.#steps.values()) void this.#launch(step)
  }

  /** Resolves once every step has ended its first attempt (or all have succeeded). */
  async settled(): Promise<void> {
    // Steps whose predecessors keep failing never make a first attempt: they count as settled once those have.
    // Closing ends every first attempt without running it: past that, a step that never ran would look waiting for
    // ever and this loop would spin on settled promises, holding the event loop.
    while (!this.#closed) {
      const waiting = [...this.#steps.values()].filter((s) => s.attempts === 0 && this.#canStart(s))
      const running = [...this.#steps.values()].filter((s) => s.state === 'running' && s.attempts === 1)
      if (waiting.length === 0 && running.length === 0) return
      await Promise.race([...waiting, ...running].map((s) => s.firstAttempt))
    }
  }

  /** Whether a step is at work now (loading, building, ingesting), rather than done or waiting to retry. */
  get working(): boolean {
    return [...this.#steps.values()].some((s) => s.state === 'running' || (s.state === 'pending' && !this.#stalled(s)))
  }

  /** True once every step has succeeded. */
  get done(): boolean {
    return [...this.#steps.values()].every((s) => s.state === 'done')
  }

  /**
   * The steps among `names` that still hold back a request needing them: a required step until it has
   * succeeded; any other step until its first attempt has ended, or until a step it waits for has
   * failed one (it cannot start soon). A step this run does not have holds nothing back.
   */
  blocking(names: readonly N[]): StepReport[] {
    const out: StepReport[] = []
    for (const name of names) {
      const step = this.#steps.get(name)
      if (!step || step.state === 'done') continue
      if (step.definition.required || !(this.#failedOnce(step) || this.#stalled(step))) out.push(this.#report(step))
    }
    return out
  }

  #failedOnce(step: Step): boolean {
    return step.state === 'retrying' || (step.attempts > 1 && step.state !== 'done')
  }

  /** Whether a step it waits for, directly or not, has failed an attempt. */
  #stalled(step: Step): boolean {
    return (step.definition.after ?? []).some((name) => {
      const dep = this.#steps.get(name)
      return dep !== undefined && dep.state !== 'done' && (this.#failedOnce(dep) || this.#stalled(dep))
    })
  }

  report(): { done: boolean; steps: StepReport[] } {
    return { done: this.done, steps: [...this.#steps.values()].map((s) => this.#report(s)) }
  }

  /**
   * Stops retrying; attempts under way finish on their own (their stores are being closed). Resolves once every
   * step's `stop` has.
   */
  async close(): Promise<void> {
    this.#closed = true
    for (const step of this.#steps.values()) {
      clearTimeout(step.timer)
      step.endFirstAttempt()
    }
    await Promise.allSettled([...this.#steps.values()].map((step) => step.definition.stop?.()))
  }

  /** The `first` steps a step waits for (none for a `first` step itself). */
  #gates(step: Step): Step[] {
    return step.definition.first ? [] : [...this.#steps.values()].filter((s) => s.definition.first)
  }

  #report(step: Step): StepReport {
    return {
      name: step.definition.name,
      state: step.state,
      detail: step.detail,
      attempts: step.attempts,
      ...(step.state === 'retrying' && step.retryAt !== undefined ? { retry_in_ms: Math.max(0, Math.round(step.retryAt - Date.now())) } : {})
    }
  }

  #canStart(step: Step): boolean {
    return this.#gates(step).every((gate) => gate.hasPassed) && (step.definition.after ?? []).every((name) => this.#steps.get(name)?.state === 'done')
  }

  async #launch(step: Step): Promise<void> {
    const after = (step.definition.after ?? []).map((name) => {
      const dep = this.#steps.get(name)
      if (!dep) throw new Error(`start-up step ${step.definition.name} waits for unknown step ${name}`)
      return dep
    })
    const gates = this.#gates(step)
    if (gates.length > 0) {
      step.detail = `waiting for ${gates.map((g) => g.definition.name).join(', ')}`
      await Promise.all(gates.map((g) => g.passed))
      if (this.#closed) return
    }
    if (after.length > 0) {
      step.detail = `waiting for ${after.map((d) => d.definition.name).join(', ')}`
      await Promise.all(after.map((d) => d.succeeded))
    }
    let delay = this.#firstRetryMs
    while (!this.#closed) {
      if (await this.#attempt(step)) return
      if (this.#closed) return
      step.retryAt = Date.now() + delay
      await new Promise<void>((resolve) => {
        step.timer = setTimeout(resolve, delay)
        step.timer.unref()
      })
      delay = Math.min(delay * 2, this.#maxRetryMs)
    }
  }

  async #attempt(step: Step): Promise<boolean> {
    const { name, doing } = step.definition
    step.state = 'running'
    step.attempts += 1
    step.detail = step.lastFailure ? `${doing}, again; the last attempt failed: ${step.lastFailure}` : doing
    const started = performance.now()
    let lastLog = started
    this.#logger?.info({ step: name, attempt: step.attempts }, `start-up: ${doing}`)
    const progress = (detail: string): void => {
      step.detail = `${doing}: ${detail}`
      const now = performance.now()
      if (now - lastLog >= PROGRESS_LOG_MS) {
        lastLog = now
        this.#logger?.info({ step: name }, `start-up: ${step.detail}`)
      }
    }
    try {
      const summary = await step.definition.run(progress)
      step.state = 'done'
      step.detail = summary || 'done'
      delete step.retryAt
      delete step.lastFailure
      this.#logger?.info({ step: name, ms: Math.round(performance.now() - started) }, `start-up: ${name} ready${summary ? `: ${summary}` : ''}`)
      step.succeed()
      step.pass()
      return true
    } catch (error) {
      step.state = 'retrying'
      step.lastFailure = errorMessage(error)
      step.detail = `${doing} failed: ${step.lastFailure}`
      const fatal = (error as { fatal?: unknown } | null)?.fatal === true
      if (fatal && this.#onFatal) {
        this.#closed = true
        this.#onFatal(name, error as Error)
        return false
      }
      if (!fatal) step.pass()
      if (!this.#closed) this.#logger?.warn({ step: name, attempt: step.attempts, err: errorMessage(error) }, `start-up: ${name} failed; retrying`)
      return false
    } finally {
      step.endFirstAttempt()
    }
  }
}
