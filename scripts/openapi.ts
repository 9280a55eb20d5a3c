import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { servedOpenApi } from '../src/http/openapi-document.js'

const target = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url))

async function main(): Promise<void> {
  const command = process.argv[2]
  const served = `${JSON.stringify(await servedOpenApi(), null, 2)}\n`
  if (command === 'write') {
    await writeFile(target, served)
    console.log(`wrote ${target}`)
    return
  }
  if (command === 'check') {
    const committed = await readFile(target, 'utf8').catch(() => '')
    if (committed !== served) {
      console.error('openapi/openapi.json differs from what the server serves: run `make openapi` and commit the result')
      process.exit(1)
    }
    console.log('openapi/openapi.json matches the served document')
    return
  }
  console.error('usage: tsx scripts/openapi.ts write|check')
  process.exit(2)
}

void main()
