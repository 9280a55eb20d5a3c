/**
 * The real `tesseract`, behind a shell script of the same name that logs each recognition (`start <pid> <ns>` and
 * `end <pid> <ns>`, the health questions `--list-langs` and `--version` not logged): put its folder first on the PATH
 * of what runs OCR. With `exec`, the script becomes tesseract itself after logging its start (so the pid is
 * tesseract's, and a kill reaches it), and no end is logged.
 */
import { spawnSync } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export async function loggedTesseract(dir: string, options: { exec?: boolean } = {}): Promise<{ bin: string; log: string }> {
  const real = spawnSync('sh', ['-c', 'command -v tesseract'], { encoding: 'utf8' }).stdout.trim()
  const log = join(dir, 'recognitions.log')
  const bin = join(dir, 'bin')
  await mkdir(bin, { recursive: true })
  await writeFile(log, '')
  const run = options.exec ? [`exec ${real} "$@"`] : [`${real} "$@"; rc=$?`, `echo "end $$ $(date +%s%N)" >> ${log}`, 'exit $rc']
  await writeFile(join(bin, 'tesseract'), ['#!/bin/sh', `[ "$1" = stdin ] || exec ${real} "$@"`, `echo "start $$ $(date +%s%N)" >> ${log}`, ...run].join('\n'))
  await chmod(join(bin, 'tesseract'), 0o755)
  return { bin, log }
}

/** The recognitions logged: each one's pid, start and (when it ended) end, in nanoseconds. */
export async function recognitions(log: string): Promise<Array<{ pid: number; start: bigint; end?: bigint }>> {
  const out: Array<{ pid: number; start: bigint; end?: bigint }> = []
  for (const line of (await readFile(log, 'utf8')).split('\n').filter(Boolean)) {
    const [kind, pid, at] = line.split(' ') as [string, string, string]
    if (kind === 'start') out.push({ pid: Number(pid), start: BigInt(at) })
    else out.findLast((r) => r.pid === Number(pid))!.end = BigInt(at)
  }
  return out
}

/** The most recognitions running at one moment (each must have ended). */
export function mostAtOnce(intervals: ReadonlyArray<{ start: bigint; end?: bigint }>): number {
  const events = intervals.flatMap(({ start, end }) => [[start, 1], [end!, -1]] as Array<[bigint, number]>)
    .sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1))
  let now = 0
  let most = 0
  for (const [, d] of events) most = Math.max(most, now += d)
  return most
}
