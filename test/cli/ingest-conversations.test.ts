/**
 * `npm run ingest` takes chats as conversations (issue #40): a LoCoMo excerpt written in its shape, an OpenAI-style
 * `messages` export and a Chinese JSONL chat (files in test/fixtures/conversations/), over HTTP to a running service.
 * Episodic then cites their turns with speaker and time; 昨天 and 上周六 are anchored to the turns' own times (8 May 2023
 * was a Monday: 7 May and 6 May); a chat with a blank speaker is refused, naming the field, and the others are written.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { sessionEpisodeId } from '../../src/derive/conversation/session-episode.js'
import { storedTurnsOf } from '../../src/kernel/conversation-turns.js'

const FIXTURES = 'test/fixtures/conversations'
let t: TestApp
let url: string
let dir: string
beforeAll(async () => {
  t = await buildTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'recall-cli-chat-'))
  await writeFile(join(dir, 'blank.jsonl'), '{"conversation": "x", "session": "s", "speaker": "", "text": "hi", "time": "2023-05-08"}\n')
}, 300_000)
afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

function cli(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], { env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.on('close', (code) => resolve({ code, output }))
  })
}

type Cited = { recall_bundle: Array<{ metadata: { turns?: Array<{ id: string; speaker: string; time: string; text: string }> } }> }
const ask = async (query: string) => (await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', namespace: 'chats', query, top_k: 3 } })).json() as Cited

describe('ingest CLI: chats as conversations', () => {
  it('writes a LoCoMo excerpt, an OpenAI-style export and a Chinese JSONL chat; refuses a blank speaker by name', async () => {
    const r = await cli(['--url', url, '--namespace', 'chats', `${FIXTURES}/locomo-excerpt.json`, `${FIXTURES}/openai-export.json`, `${FIXTURES}/chinese-chat.jsonl`, join(dir, 'blank.jsonl')])
    expect(r.code, r.output).toBe(3)
    expect(r.output).toMatch(/ingested +\S*locomo-excerpt\.json +\(1 conversations, 2 sessions, 8 turns/)
    expect(r.output).toMatch(/ingested +\S*openai-export\.json +\(1 conversations, 1 sessions, 3 turns/)
    expect(r.output).toMatch(/ingested +\S*chinese-chat\.jsonl +\(1 conversations, 2 sessions, 3 turns/)
    expect(r.output).toMatch(/refused +\S*blank\.jsonl +\(body\/conversations\/0\/sessions\/0\/turns\/0\/speaker must NOT have fewer than 1 characters \(got \"\"\)\)/)
  }, 300_000)

  it('LoCoMo: turns keep their dia_id, a photo caption joins its turn, the session time is LoCoMo\'s', async () => {
    const turns = (await ask('What did Melanie paint?')).recall_bundle.flatMap((i) => i.metadata.turns ?? [])
    expect(turns).toContainEqual({ id: 'D1:6', speaker: 'Melanie', time: '1:56 pm on 8 May, 2023', text: 'I painted that lake sunrise last year! It\'s special to me. [shares a photo of a painting of a sunrise over a lake]' })
  })

  it('OpenAI-style: the system message is left out, speakers are names or roles, the time is `created`', async () => {
    const node = (await t.app.services.episodes.describe('chats', [sessionEpisodeId('support-chat', 'messages')])).nodes.get(sessionEpisodeId('support-chat', 'messages'))
    expect(storedTurnsOf(node).map((x) => [x.turn_id, x.speaker, x.time])).toEqual([
      ['m2', 'Priya', '2023-05-08T13:56:00.000Z'], ['m3', 'assistant', '2023-05-08T13:56:00.000Z'], ['m4', 'Priya', '2023-05-08T13:56:00.000Z']
    ])
  })

  it('the Chinese chat: 昨天 and 上周六 anchored to the turns\' times, answers cite the turn', async () => {
    const node = (await t.app.services.episodes.describe('chats', [sessionEpisodeId('读书会', '5月8日')])).nodes.get(sessionEpisodeId('读书会', '5月8日'))
    expect(storedTurnsOf(node).map((x) => [x.turn_id, x.mentioned?.text, x.mentioned?.start_ms])).toEqual([
      ['c1', '昨天', Date.UTC(2023, 4, 7)], ['c2', '上周六', Date.UTC(2023, 4, 6)]
    ])
    const turns = (await ask('赵磊借了什么书？')).recall_bundle.flatMap((i) => i.metadata.turns ?? [])
    expect(turns[0]).toEqual({ id: 'c2', speaker: '赵磊', time: '2023年5月8日 下午2:03', text: '我上周六去图书馆借了《活着》。' })
  })
})
