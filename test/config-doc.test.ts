import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { envExampleProblems, renderConfigDoc } from '../scripts/lib/config-doc.js'
import { EnvSchema } from '../src/config.js'

describe('docs/configuration.md', () => {
  it('is exactly what src/config.ts renders (run `make config-doc` after changing the config schema)', async () => {
    expect(renderConfigDoc()).toBe(await readFile('docs/configuration.md', 'utf8'))
  })

  it('has a row for every variable of the schema', () => {
    const doc = renderConfigDoc()
    const missing = Object.keys(EnvSchema.properties).filter((name) => !doc.includes(`| \`${name}\` |`))
    expect(missing).toEqual([])
  })
})

describe('.env.example', () => {
  it('lists every variable the service reads, and no name that nothing reads', async () => {
    expect(envExampleProblems(await readFile('.env.example', 'utf8'))).toEqual([])
  })

  it('the check names a missing variable and an unknown one', async () => {
    const text = (await readFile('.env.example', 'utf8')).replace(/^PORT=.*$/m, '').concat('\nPORTT=3000\n')
    expect(envExampleProblems(text)).toEqual(['PORT is missing', 'PORTT is read by nothing (not in src/config.ts nor a tool\'s list)'])
  })
})
