/**
 * Chat exports as conversations bodies, for the CLI (docs/conversations.md): LoCoMo's JSON (one sample or a list:
 * `conversation.session_N` turns `{speaker, dia_id, text, blip_caption?}` and `session_N_date_time`; a photo's caption
 * joins its turn's text as ` [shares <caption>]`), an OpenAI-style `{"messages": [{role, content, name?}]}` (one
 * session; `system` messages left out; its time the file's `created` (epoch seconds) or `time`, else the file's
 * modification time), and JSONL of `{conversation, session, speaker, text, time, id?}` (a line without an `id` is
 * `l<line number>`; a session's time is its first line's). Undefined when the text is none of them.
 */
import type { ConversationsBody } from './body.js'

type Conversations = ConversationsBody['conversations']
type Session = Conversations[number]['sessions'][number]

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export function conversationsOfChatFile(text: string, name: string, modified: Date): Conversations | undefined {
  if (/\.jsonl$|\.ndjson$/i.test(name)) return fromJsonl(text)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const samples = Array.isArray(parsed) ? parsed : [parsed]
  if (samples.length > 0 && samples.every((s) => isObject(s) && isObject(s['conversation']))) return samples.map((s, i) => fromLocomo(s as Record<string, unknown>, `${baseName(name)}-${i}`))
  if (isObject(parsed) && Array.isArray(parsed['messages'])) return [fromMessages(parsed, name, modified)]
  return undefined
}

function fromLocomo(sample: Record<string, unknown>, fallback: string): Conversations[number] {
  const c = sample['conversation'] as Record<string, unknown>
  const sessions = Object.keys(c).filter((k) => /^session_\d+$/.test(k)).sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
    .map((k): Session => ({
      id: k, time: String(c[`${k}_date_time`] ?? ''),
      turns: (Array.isArray(c[k]) ? c[k] as Array<Record<string, unknown>> : []).map((t, j) => ({
        id: String(t['dia_id'] ?? `${k}:${j + 1}`), speaker: String(t['speaker'] ?? ''),
        text: typeof t['blip_caption'] === 'string' ? `${String(t['text'] ?? '')} [shares ${t['blip_caption']}]` : String(t['text'] ?? '')
      }))
    }))
  const participants = [c['speaker_a'], c['speaker_b']].filter((s): s is string => typeof s === 'string')
  return { id: typeof sample['sample_id'] === 'string' ? sample['sample_id'] : fallback, ...(participants.length > 0 ? { participants } : {}), sessions }
}

function fromMessages(body: Record<string, unknown>, name: string, modified: Date): Conversations[number] {
  const created = body['created'] ?? body['create_time']
  const time = typeof body['time'] === 'string' ? body['time']
    : typeof created === 'number' ? new Date(created * 1000).toISOString() : modified.toISOString()
  const messages = (body['messages'] as unknown[]).filter(isObject)
  const turns = messages.map((m, i) => ({ m, i })).filter(({ m }) => m['role'] !== 'system').map(({ m, i }) => ({
    id: typeof m['id'] === 'string' ? m['id'] : `m${i + 1}`,
    speaker: typeof m['name'] === 'string' ? m['name'] : String(m['role'] ?? ''),
    text: contentText(m['content'])
  }))
  return { id: typeof body['id'] === 'string' ? body['id'] : baseName(name), sessions: [{ id: 'messages', time, turns }] }
}

/** A message's content: a string, or the text parts of a list of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.filter(isObject).map((p) => (typeof p['text'] === 'string' ? p['text'] : '')).filter((t) => t !== '').join('\n')
}

function fromJsonl(text: string): Conversations | undefined {
  const conversations = new Map<string, Map<string, Session>>()
  const lines = text.split(/\r?\n/)
  for (const [n, line] of lines.entries()) {
    if (line.trim() === '') continue
    let row: unknown
    try {
      row = JSON.parse(line)
    } catch {
      return undefined
    }
    if (!isObject(row) || typeof row['speaker'] !== 'string' || typeof row['text'] !== 'string') return undefined
    const conversation = String(row['conversation'] ?? '')
    const sessionId = String(row['session'] ?? '')
    const time = typeof row['time'] === 'string' ? row['time'] : ''
    const sessions = conversations.get(conversation) ?? new Map<string, Session>()
    conversations.set(conversation, sessions)
    const session = sessions.get(sessionId) ?? { id: sessionId, time, turns: [] }
    sessions.set(sessionId, session)
    session.turns.push({ id: typeof row['id'] === 'string' ? row['id'] : `l${n + 1}`, speaker: row['speaker'], text: row['text'], ...(time ? { time } : {}) })
  }
  if (conversations.size === 0) return undefined
  return [...conversations].map(([id, sessions]) => ({ id, sessions: [...sessions.values()] }))
}

const baseName = (file: string) => file.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, '')
