// Repeated cells of one arm (build, client, path, client count) summarised with their spread, and the ratio to the CPU
// bound made per repeat: repeat r's many-client cell against repeat r's 1-client cell, both taken in the same round.

/** What a repeated cell must hold; bench/concurrency.ts's cells have more. */
interface RepeatedCell {
  build: string
  client: string
  path: string
  clients: number
  repeat: number
  answers: number
  answers_per_s: number
  server_cpu_ms_per_answer: number
  client_cpu_ms_per_answer: number
}

interface Spread {
  median: number
  min: number
  max: number
  /** (max − min) ÷ median. */
  relative_range: number
}

interface ArmSummary {
  build: string
  client: string
  path: string
  clients: number
  repeats: number
  answers_per_s: Spread
  cpu_ms_per_answer: Spread
  /** answers/s ÷ (cores ÷ CPU per answer at 1 client), repeat by repeat. Under load it says how much of the cores the server got. */
  ratio_to_bound?: Spread
  /**
   * CPU per answer at 1 client ÷ at this many clients, repeat by repeat: the ratio to the bound the cell would reach with
   * every core busy. Load-robust (CPU, not time), so it is the figure to compare arms by on a shared machine.
   */
  cpu_alone_over_here?: Spread
}

const round = (x: number, digits = 3): number => Number(x.toFixed(digits))

function spread(xs: readonly number[]): Spread {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length / 2
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  const min = sorted[0]!
  const max = sorted.at(-1)!
  return { median: round(median), min: round(min), max: round(max), relative_range: round((max - min) / median) }
}

const cpuOf = (c: RepeatedCell): number => c.server_cpu_ms_per_answer + c.client_cpu_ms_per_answer
const armKey = (c: Omit<RepeatedCell, 'repeat' | 'answers' | 'answers_per_s' | 'server_cpu_ms_per_answer' | 'client_cpu_ms_per_answer'>): string =>
  `${c.build}\u0000${c.client}\u0000${c.path}\u0000${c.clients}`

/** One summary per arm, in the order the arms first appear. */
export function summariseArms(cells: readonly RepeatedCell[], cores: number): ArmSummary[] {
  const arms = new Map<string, RepeatedCell[]>()
  for (const cell of cells) arms.set(armKey(cell), [...(arms.get(armKey(cell)) ?? []), cell])
  return [...arms.values()].map((own) => {
    const first = own[0]!
    const alone = new Map(cells.filter((c) => armKey(c) === armKey({ ...first, clients: 1 })).map((c) => [c.repeat, c]))
    const paired = own.flatMap((c) => {
      const one = alone.get(c.repeat)
      return one === undefined ? [] : [{ c, one }]
    })
    return {
      build: first.build, client: first.client, path: first.path, clients: first.clients, repeats: own.length,
      answers_per_s: spread(own.map((c) => c.answers_per_s)),
      cpu_ms_per_answer: spread(own.map(cpuOf)),
      ...(paired.length === 0 ? {} : {
        ratio_to_bound: spread(paired.map(({ c, one }) => c.answers_per_s / (cores / (cpuOf(one) / 1000)))),
        cpu_alone_over_here: spread(paired.map(({ c, one }) => cpuOf(one) / cpuOf(c)))
      })
    }
  })
}

/**
 * How CPU per answer of one arm spreads with the time behind each figure: the arm's repeats taken k at a time
 * (consecutive, pooled as answers and CPU summed), for k = 1, 2, 4 … while at least two pools remain. The largest
 * deviation of a pool from the arm's median pool, relative, tells how long a cell must be for two cells to agree.
 */
export function spreadByPooledLength(cells: readonly RepeatedCell[], secondsPerCell: number): Array<{ build: string; client: string; path: string; clients: number; pools: Array<{ seconds: number; count: number; cpu_ms_per_answer: Spread }> }> {
  const arms = new Map<string, RepeatedCell[]>()
  for (const cell of cells) arms.set(armKey(cell), [...(arms.get(armKey(cell)) ?? []), cell])
  return [...arms.values()].map((own) => {
    const sorted = [...own].sort((a, b) => a.repeat - b.repeat)
    const pools: Array<{ seconds: number; count: number; cpu_ms_per_answer: Spread }> = []
    for (let k = 1; sorted.length / k >= 2; k *= 2) {
      const values: number[] = []
      for (let start = 0; start + k <= sorted.length; start += k) {
        const group = sorted.slice(start, start + k)
        const answers = group.reduce((s, c) => s + c.answers, 0)
        values.push(group.reduce((s, c) => s + cpuOf(c) * c.answers, 0) / answers)
      }
      pools.push({ seconds: k * secondsPerCell, count: values.length, cpu_ms_per_answer: spread(values) })
    }
    const first = sorted[0]!
    return { build: first.build, client: first.client, path: first.path, clients: first.clients, pools }
  })
}
