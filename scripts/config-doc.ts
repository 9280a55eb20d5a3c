import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { envExampleProblems, renderConfigDoc } from './lib/config-doc.js'

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url))
const envExample = fileURLToPath(new URL('../.env.example', import.meta.url))

async function main(): Promise<void> {
  const command = process.argv[2]
  const rendered = renderConfigDoc()
  const problems = envExampleProblems(await readFile(envExample, 'utf8'))
  if (problems.length > 0) {
    console.error(`.env.example: ${problems.join('; ')}`)
    process.exit(1)
  }
  if (command === 'write') {
    await writeFile(target, rendered)
    console.log(`wrote ${target}`)
    return
  }
  if (command === 'check') {
    const committed = await readFile(target, 'utf8').catch(() => '')
    if (committed !== rendered) {
      console.error('docs/configuration.md differs from src/config.ts: run `make config-doc` and commit the result')
      process.exit(1)
    }
    console.log('docs/configuration.md matches src/config.ts; .env.example lists every variable')
    return
  }
  console.error('usage: tsx scripts/config-doc.ts write|check')
  process.exit(2)
}

void main()
