/**
 * Episodic ranks a conversation's sessions, and cites their turns, by each turn's own evidence
 * (adapters/episodic/turn-evidence.ts; docs/conversations.md, "Reading"), on the embedded stores and on Neo4j, with the
 * English model. What is expected follows from the scoring rule whatever the vectors are (each turn's own score is
 * half its min-max normalised cosine plus half its min-max normalised BM25, so in [0, 1]; in context a turn gains 0.6 of
 * its better neighbour's own score and 0.2 of its session's best; a question's time adds 1 to the cost of a session
 * whose mentioned time misses it and 1 to the score of a turn whose time it covers):
 * - "What happened on 2023-05-06?" shares no word with any turn (its words: what, happen, 2023, 05, 06), so every own
 *   score is at most 0.5. Only D1:2 ("last Saturday" said on Monday 8 May 2023: Saturday 6 May) is of that day: its
 *   session costs at most 1 (1 - its best own score) while the other costs at least 1.5, and in context D1:2 scores at least 1 where the other
 *   turns of its session score at most 0.5 + 0.3 + 0.1.
 * - "Zorbulon's favourite food?" (its words: zorbulon, favourit, food) is nearest in meaning to the meals of s1, but only
 *   D2:3 holds one of its words: its own score is 0.5 + half its normalised cosine, every other turn's at most 0.5 (at
 *   most 0.5 + half the lowest cosine, which D2:3 then beats unless it is itself the farthest turn), so its session
 *   comes first through it (by the vector alone, s1's meals win).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { sessionEpisodeId, turnPointId } from '../../src/derive/conversation/session-episode.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const CONVERSATION = {
  id: 'mel-caro',
  sessions: [{
    id: 's1', time: '1:56 pm on 8 May, 2023',
    turns: [
      { id: 'D1:1', speaker: 'Caroline', text: 'Hey Mel! Good to see you! How have you been?' },
      { id: 'D1:2', speaker: 'Melanie', text: 'I ran a charity race for mental health last Saturday.' },
      { id: 'D1:3', speaker: 'Caroline', text: 'That is amazing! I love running too.' },
      { id: 'D1:4', speaker: 'Melanie', text: 'Thanks! The kids cheered at the finish line.' },
      { id: 'D1:5', speaker: 'Caroline', text: 'I cooked pasta with basil and garlic for dinner.' },
      { id: 'D1:6', speaker: 'Melanie', text: 'We tried a new sushi place, the salmon rolls were delicious.' }
    ]
  }, {
    id: 's2', time: '2023-05-25T13:14:00Z',
    turns: [
      { id: 'D2:1', speaker: 'Melanie', text: 'Hey Caroline, the garden is full of tomatoes now.' },
      { id: 'D2:2', speaker: 'Caroline', text: 'I am researching adoption agencies in Boston.' },
      { id: 'D2:3', speaker: 'Melanie', text: 'My friend Zorbulon paints murals downtown.' },
      { id: 'D2:4', speaker: 'Caroline', text: 'I would love to see those murals someday.' }
    ]
  }]
}

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`conversation-turn-evidence (qdrant+neo4j): ${QDRANT_SKIP_LINE}`)

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) },
  {
    // the turns are pooled by a search of the vector store: Qdrant's answer (its limit, its payloads) is read too
    name: 'qdrant+neo4j', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `cte_${randomBytes(3).toString('hex')}_`,
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000'
    })
  }
]

type Answer = { recall_bundle: Array<{ id: string; score: number; metadata: { best_path: string; best_point_id: string | null; turns?: Array<{ id: string; speaker: string; time: string; text: string }> } }> }

for (const backend of backends) {
  describe.skipIf(backend.skip === true)(`episodic turn evidence in conversations (${backend.name})`, () => {
    let t: TestApp
    const ns = `turns-${randomBytes(4).toString('hex')}`
    beforeAll(async () => {
      t = await buildTestApp({ EMBEDDING_MODEL: 'bge-small-en-v1.5', ...backend.env() })
      const res = await t.app.inject({ method: 'POST', url: '/ingest/conversations', payload: { namespace: ns, conversations: [CONVERSATION] } })
      expect(res.statusCode, res.body).toBe(200)
    })
    afterAll(async () => {
      await t.app.services.writePath.write(ns, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await t.close()
    })
    const retrieve = async (query: string) => {
      const res = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query, namespace: ns, top_k: 5 } })
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as Answer
    }

    it('a question naming a day finds the turn that said it, though no word is shared', async () => {
      const answer = await retrieve('What happened on 2023-05-06?')
      expect(answer.recall_bundle[0]?.id).toBe(sessionEpisodeId(CONVERSATION.id, 's1'))
      expect(answer.recall_bundle[0]?.metadata.turns?.[0]).toMatchObject({ id: 'D1:2', speaker: 'Melanie', text: CONVERSATION.sessions[0]!.turns[1]!.text })
      expect(answer.recall_bundle[0]?.metadata.best_path).toBe('point')
      // a cost of 0 or more: the score stays in (0, 1]
      for (const item of answer.recall_bundle) expect(item.score).toBeGreaterThan(0)
      for (const item of answer.recall_bundle) expect(item.score).toBeLessThanOrEqual(1)
    })

    it('a word only one turn holds brings its session first, through that turn', async () => {
      const answer = await retrieve('Zorbulon\'s favourite food?')
      expect(answer.recall_bundle[0]?.id).toBe(sessionEpisodeId(CONVERSATION.id, 's2'))
      expect(answer.recall_bundle[0]?.metadata.best_point_id).toBe(turnPointId(sessionEpisodeId(CONVERSATION.id, 's2'), 'D2:3'))
    })
  })
}
