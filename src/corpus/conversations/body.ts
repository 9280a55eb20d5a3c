/**
 * A conversations body (`POST /ingest/conversations`, the MCP tool `remember`, the CLI): its schema, its limits and
 * the one check every door runs, which reads the times and names every problem with its field and value.
 */
import { Type, type Static } from 'typebox'
import { NamespaceSchema } from '../../schemas/common.js'
import { checkAgainst } from '../../schemas/validation.js'
import { parseChatTime } from '../../derive/conversation/chat-time.js'
import type { ChatSession } from '../../derive/conversation/session-episode.js'

/** Turns per request, and characters per turn text. */
const MAX_TURNS_PER_REQUEST = 10_000
const MAX_TURN_CHARS = 20_000
const MAX_ID = 512

const Id = (what: string) => Type.String({ minLength: 1, maxLength: MAX_ID, description: `${what} id.` })
const TimeText = (what: string) => Type.String({
  minLength: 1, maxLength: 64,
  description: `${what}: ISO 8601 (\`2023-05-08T13:56:00Z\`), \`1:56 pm on 8 May, 2023\`, \`May 8, 2023 1:56 PM\`, \`2023/05/08 13:56\` or \`2023年5月8日 下午1:56\`; without an offset, UTC.`
})

export const TurnSchema = Type.Object({
  id: Id('Turn (unique within its session)'),
  speaker: Type.String({ minLength: 1, maxLength: 200, description: 'Who said it.' }),
  text: Type.String({ minLength: 1, maxLength: MAX_TURN_CHARS, description: `What was said, at most ${MAX_TURN_CHARS} characters.` }),
  time: Type.Optional(TimeText('When it was said; absent, the session\'s time'))
})

export const SessionSchema = Type.Object({
  id: Id('Session (unique within its conversation)'),
  time: TimeText('When the session took place'),
  turns: Type.Array(TurnSchema, { description: 'Turns in the order they were said; a turn id already stored in this session is replaced in place, a new one appended.' })
})

export const ConversationSchema = Type.Object({
  id: Id('Conversation'),
  participants: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  sessions: Type.Array(SessionSchema, { minItems: 1, description: 'Sessions to add or update; the conversation\'s other sessions are kept.' })
})

export const ConversationsBodySchema = Type.Object({
  namespace: Type.Optional(NamespaceSchema),
  conversations: Type.Array(ConversationSchema, { minItems: 1, maxItems: 1000 })
}, { description: 'Conversations, sessions and turns to remember (docs/conversations.md).' })
export type ConversationsBody = Static<typeof ConversationsBodySchema>

/** A conversation as it is written: every time read. */
export interface ConversationInput {
  id: string
  participants?: string[]
  sessions: ChatSession[]
}

/** A 400 for a bad conversations body: every problem names its field and value. */
export class ConversationIngestError extends Error {
  override name = 'ConversationIngestError'
  constructor(readonly problems: string[]) {
    super(`invalid conversations body: ${problems.join('; ')}`)
  }
}

const checkSchema = checkAgainst(ConversationsBodySchema)

/**
 * The conversations of a body, checked and with their times read, or a {@link ConversationIngestError} listing every
 * problem: the schema's, blank ids, speakers or texts, a time that does not parse, an id given twice in one body
 * (conversation, session within it, turn within its session), more than {@link MAX_TURNS_PER_REQUEST} turns.
 */
export function readConversations(body: unknown): ConversationInput[] {
  const misfit = checkSchema(body)
  if (misfit !== undefined) throw new ConversationIngestError([misfit])
  const valid = body as ConversationsBody
  const problems: string[] = []
  const time = (value: string, at: string): number => {
    const ms = parseChatTime(value)
    if (ms === undefined) problems.push(`${at}: time ${JSON.stringify(value)} is not a date and time this service reads (ISO 8601, "1:56 pm on 8 May, 2023", "2023年5月8日 下午1:56")`)
    return ms ?? 0
  }
  const blank = (value: string, at: string): void => {
    if (value.trim() === '') problems.push(`${at}: must not be blank`)
  }
  const once = (seen: Set<string>, id: string, at: string, what: string): void => {
    if (seen.has(id)) problems.push(`${at}.id: ${what} ${JSON.stringify(id)} is given twice`)
    seen.add(id)
  }
  const turns = valid.conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0)
  if (turns > MAX_TURNS_PER_REQUEST) problems.push(`conversations: ${turns} turns, more than MAX_TURNS_PER_REQUEST (${MAX_TURNS_PER_REQUEST}); send them in several requests`)
  const conversations = new Set<string>()
  const read = valid.conversations.map((c, i): ConversationInput => {
    const at = `conversations[${i}]`
    blank(c.id, `${at}.id`)
    once(conversations, c.id, at, 'conversation')
    const sessionIds = new Set<string>()
    const sessions = c.sessions.map((s, j): ChatSession => {
      const sat = `${at}.sessions[${j}]`
      blank(s.id, `${sat}.id`)
      once(sessionIds, s.id, sat, 'session')
      const turnIds = new Set<string>()
      return {
        id: s.id, time: s.time, time_ms: time(s.time, `${sat}.time`),
        turns: s.turns.map((t, k) => {
          const tat = `${sat}.turns[${k}]`
          blank(t.id, `${tat}.id`)
          blank(t.speaker, `${tat}.speaker`)
          blank(t.text, `${tat}.text`)
          once(turnIds, t.id, tat, 'turn')
          return { id: t.id, speaker: t.speaker.trim(), text: t.text, ...(t.time !== undefined ? { time: t.time, time_ms: time(t.time, `${tat}.time`) } : {}) }
        })
      }
    })
    return { id: c.id, ...(c.participants ? { participants: c.participants } : {}), sessions }
  })
  if (problems.length > 0) throw new ConversationIngestError(problems)
  return read
}
