import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { clientSchemaSource } from './lib/client-schema.js'

const openapi = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url))
const target = fileURLToPath(new URL('../clients/typescript/schema.d.ts', import.meta.url))

async function main(): Promise<void> {
  const command = process.argv[2]
  const generated = await clientSchemaSource(JSON.parse(await readFile(openapi, 'utf8')))
  if (command === 'write') {
    await writeFile(target, generated)
    console.log(`wrote ${target}`)
    return
  }
  if (command === 'check') {
    if ((await readFile(target, 'utf8').catch(() => '')) !== generated) {
      console.error('clients/typescript/schema.d.ts differs from openapi/openapi.json: run `make client` and commit the result')
      process.exit(1)
    }
    console.log('clients/typescript/schema.d.ts matches openapi/openapi.json')
    return
  }
  console.error('usage: tsx scripts/client.ts write|check')
  process.exit(2)
}

void main()
