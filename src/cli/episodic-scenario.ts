/**
 * `npm run --silent episodic:scenario -- FILE.json`: runs an episodic scenario (docs/episodic.md) and
 * prints the runner's JSON on stdout. Exit code 2 for a bad file or scenario.
 */
import { readFile } from 'node:fs/promises'
import { runScenario, ScenarioError, type ScenarioInput } from '../../adapters/episodic/scenario.js'

async function main(argv: readonly string[]): Promise<number> {
  const file = argv[0]
  if (!file) {
    process.stderr.write('usage: episodic-scenario FILE.json\n')
    return 2
  }
  let input: ScenarioInput
  try {
    input = JSON.parse(await readFile(file, 'utf8')) as ScenarioInput
  } catch (error) {
    process.stderr.write(`cannot read ${file}: ${(error as Error).message}\n`)
    return 2
  }
  try {
    const output = await runScenario(input)
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`)
    return 0
  } catch (error) {
    if (error instanceof ScenarioError) {
      process.stderr.write(`${error.message}\n`)
      return 2
    }
    throw error
  }
}

process.exitCode = await main(process.argv.slice(2))
