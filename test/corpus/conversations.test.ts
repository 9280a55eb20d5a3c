/**
 * Conversations as memory (issue #40, items 1 and 2) through `POST /ingest/conversations` and
 * `DELETE /conversations/{id}`, on the embedded stores and on Neo4j, with the real model: a session becomes one
 * derived Episode whose FacetPoints are its turns; sending a session again upserts its turns by id and keeps the
 * conversation's other sessions; only new turn texts are embedded; bad bodies are 400s naming the field and write
 * nothing; episodic answers cite the turns. Expected dates are worked out by hand from the calendar (8 May 2023 was a
 * Monday).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { conversationRecordId, sessionEpisodeId, turnPointId } from '../../src/derive/conversation/session-episode.js'
import { storedTurnsOf } from '../../src/kernel/conversation-turns.js'

const DAY = 86_400_000
const ENGLISH = {
  id: 'caroline-melanie',
  sessions: [{
    id: 's1', time: '1:56 pm on 8 May, 2023',
    turns: [
      { id: 'D1:1', speaker: 'Caroline', text: 'Hey Mel! Good to see you! How have you been?' },
      { id: 'D1:2', speaker: 'Melanie', text: 'Hey Caroline! I am swamped with the kids and work. What is up with you?' },
      { id: 'D1:3', speaker: 'Caroline', text: 'I went to a LGBTQ support group yesterday and it was so powerful.' },
      { id: 'D1:4', speaker: 'Melanie', text: 'Wow, that is cool! What happened that was so awesome?' }
    ]
  }, {
    id: 's2', time: '2023-05-25T13:14:00Z',
    turns: [
      { id: 'D2:1', speaker: 'Melanie', text: 'Hey Caroline, I ran a charity race for mental health last Saturday.' },
      { id: 'D2:2', speaker: 'Caroline', text: 'That is amazing, Mel! I am researching adoption agencies in Boston.' }
    ]
  }]
}
const CHINESE = {
  id: '张伟-李娜',
  sessions: [{
    id: '第一次', time: '2023年5月8日 下午1:56',
    turns: [
      { id: 't1', speaker: '张伟', text: '我昨天去外滩拍了很多照片。' },
      { id: 't2', speaker: '李娜', text: '真好！我上周六在西湖跑了半程马拉松。' }
    ]
  }]
}

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) }
]

for (const backend of backends) {
  describe(`conversations through the write path (${backend.name})`, () => {
    let t: TestApp
    const ns = `conv-${randomBytes(4).toString('hex')}`
    beforeAll(async () => { t = await buildTestApp(backend.env()) })
    afterAll(async () => {
      await t.app.services.writePath.write(ns, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await t.close()
    })
    const post = (body: object) => t.app.inject({ method: 'POST', url: '/ingest/conversations', payload: body })
    const session = async (conversation: string, id: string) => {
      const episode = sessionEpisodeId(conversation, id)
      return (await t.app.services.episodes.describe(ns, [episode])).nodes.get(episode)
    }
    const retrieve = async (query: string) => (await t.app.inject({
      method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query, namespace: ns, top_k: 5 }
    })).json() as { recall_bundle: Array<{ id: string; metadata: { turns?: Array<{ id: string; speaker: string; time: string }> } }> }

    it('writes each session as an Episode whose FacetPoints are its turns, embedding each turn text once', async () => {
      const res = await post({ namespace: ns, conversations: [ENGLISH] })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toMatchObject({ conversations: 1, sessions: 2, sessions_written: 2, turns: 6, turns_embedded: 6 })
      const s1 = await session(ENGLISH.id, 's1')
      expect(storedTurnsOf(s1).map((x) => x.turn_id)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D1:4'])
      expect(s1?.created_at).toBe(Date.UTC(2023, 4, 8, 13, 56))
      const point = turnPointId(sessionEpisodeId(ENGLISH.id, 's1'), 'D1:3')
      const described = await t.app.services.episodes.describe(ns, [point])
      expect(described.nodes.get(point)?.search_text).toBe('Caroline: I went to a LGBTQ support group yesterday and it was so powerful.')
      // "yesterday" said on Monday 8 May 2023 is Sunday 7 May 2023
      expect(described.nodes.get(point)?.mentioned_time_start_ms).toBe(Date.UTC(2023, 4, 7))
      expect(described.nodes.get(point)?.mentioned_time_end_ms).toBe(Date.UTC(2023, 4, 7) + DAY)
      // "last Saturday" said on Thursday 25 May 2023 is 20 May 2023
      const race = turnPointId(sessionEpisodeId(ENGLISH.id, 's2'), 'D2:1')
      expect((await t.app.services.episodes.describe(ns, [race])).nodes.get(race)?.mentioned_time_start_ms).toBe(Date.UTC(2023, 4, 20))
    })

    it('an episodic answer cites its turns, best first, with speaker and time', async () => {
      const answer = await retrieve('Where did Caroline go to a support group?')
      const top = answer.recall_bundle[0]!
      expect(top.id).toBe(sessionEpisodeId(ENGLISH.id, 's1'))
      expect(top.metadata.turns?.[0]).toEqual({ id: 'D1:3', speaker: 'Caroline', time: '1:56 pm on 8 May, 2023', text: 'I went to a LGBTQ support group yesterday and it was so powerful.' })
    })

    it('/context packs a session item as its turns, best first, each with its time and speaker', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/context', payload: {
        mode: 'episodic', query: 'Where did Caroline go to a support group?', namespace: ns, top_k: 1, max_tokens: 2000, format: 'text'
      } })
      expect(res.statusCode, res.body).toBe(200)
      const context = (res.json() as { context: string }).context
      const first = context.indexOf('[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.')
      expect(first).toBeGreaterThanOrEqual(0)
      // the session's other turns follow it
      expect(context.indexOf('[1:56 pm on 8 May, 2023] Melanie: Wow, that is cool!')).toBeGreaterThan(first)
    })

    it('appending one turn embeds that turn only, keeps the others in order and leaves the other session as it was', async () => {
      const s2before = await session(ENGLISH.id, 's2')
      const res = await post({ namespace: ns, conversations: [{ id: ENGLISH.id, sessions: [{ id: 's1', time: '1:56 pm on 8 May, 2023', turns: [
        { id: 'D1:5', speaker: 'Caroline', text: 'The transgender stories were so inspiring!' }
      ] }] }] })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json()).toMatchObject({ sessions: 1, sessions_written: 1, turns: 5, turns_embedded: 1 })
      expect(storedTurnsOf(await session(ENGLISH.id, 's1')).map((x) => x.turn_id)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D1:4', 'D1:5'])
      expect(await session(ENGLISH.id, 's2')).toEqual(s2before)
    })

    it('a turn sent again by id is replaced in place; a session sent as it is writes nothing new', async () => {
      const res = await post({ namespace: ns, conversations: [{ id: ENGLISH.id, sessions: [{ id: 's1', time: '1:56 pm on 8 May, 2023', turns: [
        { id: 'D1:2', speaker: 'Melanie', text: 'Hey Caroline! The kids keep me busy. What is new?' }
      ] }] }] })
      expect(res.json()).toMatchObject({ turns: 5, turns_embedded: 1 })
      const turns = storedTurnsOf(await session(ENGLISH.id, 's1'))
      expect(turns.map((x) => x.turn_id)).toEqual(['D1:1', 'D1:2', 'D1:3', 'D1:4', 'D1:5'])
      expect(turns[1]!.text).toBe('Hey Caroline! The kids keep me busy. What is new?')
      const again = await post({ namespace: ns, conversations: [ENGLISH] })
      // the first four turns of s1 as first sent: D1:2 changes back (one embedding); nothing else is embedded
      expect(again.json()).toMatchObject({ turns_embedded: 1, sessions_written: 1 })
    })

    it('refuses a bad body with a 400 naming the field and value, and writes none of it', async () => {
      const before = await t.app.services.episodes.countByType(ns)
      const good = { id: 'other', sessions: [{ id: 'x', time: '2023-05-08', turns: [{ id: 'a', speaker: 'Ann', text: 'hello there' }] }] }
      const cases: Array<[object, string]> = [
        [{ id: 'bad', sessions: [{ id: 'x', time: 'sometime in May', turns: [{ id: 'a', speaker: 'Ann', text: 'hi' }] }] }, 'conversations[1].sessions[0].time: time "sometime in May"'],
        [{ id: 'bad', sessions: [{ id: 'x', time: '2023-05-08', turns: [{ id: 'a', speaker: '  ', text: 'hi' }] }] }, 'conversations[1].sessions[0].turns[0].speaker: must not be blank'],
        [{ id: 'bad', sessions: [{ id: 'x', time: '2023-05-08', turns: [{ id: 'a', speaker: 'Ann', text: 'hi' }, { id: 'a', speaker: 'Bo', text: 'yo' }] }] }, 'conversations[1].sessions[0].turns[1].id: turn "a" is given twice'],
        [{ id: 'bad', sessions: [{ id: 'x', time: '2023-02-30', turns: [{ id: 'a', speaker: 'Ann', text: 'hi' }] }] }, 'time "2023-02-30"'],
        [{ id: 'bad', sessions: [{ id: 'x', time: '2023-05-08', turns: [{ id: 'a', speaker: 'Ann' }] }] }, 'text']
      ]
      for (const [bad, names] of cases) {
        const res = await post({ namespace: ns, conversations: [good, bad] })
        expect(res.statusCode, JSON.stringify(bad)).toBe(400)
        expect(res.json().message).toContain(names)
      }
      expect(await t.app.services.episodes.countByType(ns)).toEqual(before)
      const big = await t.app.inject({ method: 'POST', url: '/ingest/conversations', headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ namespace: ns, conversations: [{ ...good, sessions: [{ ...good.sessions[0], turns: [{ id: 'a', speaker: 'Ann', text: 'x'.repeat(11 * 1024 * 1024) }] }] }] }) })
      expect(big.statusCode).toBe(413)
      expect(await t.app.services.episodes.countByType(ns)).toEqual(before)
    })

    it('anchors 昨天 and 上周六 to a Chinese session\'s time, and Chinese speakers become entities', async () => {
      const res = await post({ namespace: ns, conversations: [CHINESE] })
      expect(res.statusCode, res.body).toBe(200)
      const episode = sessionEpisodeId(CHINESE.id, '第一次')
      const turns = storedTurnsOf(await session(CHINESE.id, '第一次'))
      // Monday 8 May 2023: 昨天 is Sunday 7 May, 上周六 the Saturday of the week before, 6 May
      expect(turns.map((x) => [x.turn_id, x.mentioned?.text, x.mentioned?.start_ms])).toEqual([
        ['t1', '昨天', Date.UTC(2023, 4, 7)], ['t2', '上周六', Date.UTC(2023, 4, 6)]
      ])
      const links = (await t.app.services.episodes.describe(ns, [episode])).edges.filter((e) => e.relationship_name === 'involves_entity').map((e) => e.to).sort()
      expect(links).toEqual(['d:张伟', 'd:李娜'])
      const answer = await retrieve('李娜上周六跑了什么比赛？')
      expect(answer.recall_bundle[0]?.metadata.turns?.[0]?.id).toBe('t2')
    })

    it('DELETE /conversations/{id} removes its sessions, turns and vectors; an unknown id is a 404', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: `/conversations/${encodeURIComponent(ENGLISH.id)}?namespace=${ns}` })
      expect(res.statusCode, res.body).toBe(200)
      const ids = [conversationRecordId(ENGLISH.id), sessionEpisodeId(ENGLISH.id, 's1'), sessionEpisodeId(ENGLISH.id, 's2')]
      expect((await t.app.services.episodes.nodeTypes(ns, ids)).size).toBe(0)
      const prefix = `${t.config.collectionPrefix}derived_FacetPoint_search_text`
      const left: string[] = []
      for await (const r of t.app.services.vectors.scroll(prefix, ns, ids)) left.push(r.id)
      expect(left).toEqual([])
      // the Chinese conversation is still there
      expect((await t.app.services.episodes.nodeTypes(ns, [sessionEpisodeId(CHINESE.id, '第一次')])).size).toBe(1)
      const again = await t.app.inject({ method: 'DELETE', url: `/conversations/${encodeURIComponent(ENGLISH.id)}?namespace=${ns}` })
      expect(again.statusCode).toBe(404)
    })
  })
}
