/**
 * The things a session's turns name, as entity candidates: for Chinese, what document derivation finds (jieba's nouns
 * and names, the frequent n-grams: `../document.ts`), keeping the CJK names only (on English text it takes every
 * word); for English, by rule, runs of capitalised words (`Lake Tahoe`, `LGBTQ`, `Melanie`) that do not open a
 * sentence, or that the turns also write capitalised elsewhere.
 */
import { deriveDocument, type DerivedEntity } from '../document.js'
import { nameKey } from '../normalise.js'
import type { DerivationOptions } from '../options.js'
import type { ChatTurn } from './session-episode.js'

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const CAPITALISED_RUN = /(?<![\p{L}\p{N}'’])(?:[A-Z][\p{L}\p{N}'’&-]*)(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][\p{L}\p{N}'’&-]*)*/gu
/** Words capitalised for grammar, never names alone. */
const NOT_NAMES = new Set([
  'i', "i'm", "i've", "i'll", "i'd", 'the', 'a', 'an', 'and', 'but', 'or', 'so', 'yes', 'no', 'oh', 'wow', 'hey', 'hi',
  'hello', 'thanks', 'thank', 'ok', 'okay', 'yeah', 'it', 'this', 'that', 'my', 'we', 'you', 'he', 'she', 'they',
  'what', 'when', 'where', 'why', 'how', 'who', 'mon', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday',
  'saturday', 'sunday', 'congrats', 'sure', 'great', 'awesome', 'cool', 'nice', 'good', 'well'
])

export function namedThings(turns: readonly ChatTurn[], options: DerivationOptions): DerivedEntity[] {
  const found = new Map<string, DerivedEntity>()
  const note = (name: string, turnId: string, type?: string): void => {
    const key = nameKey(name)
    if (key.length < 2 || NOT_NAMES.has(key)) return
    const entity = found.get(key) ?? { key, name, ...(type ? { type } : {}), chunk_ids: [], mentions: 0 }
    entity.mentions += 1
    if (!entity.chunk_ids.includes(turnId)) entity.chunk_ids.push(turnId)
    found.set(key, entity)
  }
  const cjk = turns.filter((t) => CJK.test(t.text))
  if (cjk.length > 0) {
    for (const e of deriveDocument(cjk.map((t) => ({ id: t.id, text: t.text })), options).entities) {
      if (!CJK.test(e.key)) continue
      found.set(e.key, { ...e, chunk_ids: [...e.chunk_ids] })
    }
  }
  const midSentence = new Set<string>()
  const runs: Array<{ name: string; turn: string; opens: boolean }> = []
  for (const t of turns) {
    for (const m of t.text.matchAll(CAPITALISED_RUN)) {
      const before = t.text.slice(0, m.index).trimEnd()
      const opens = before === '' || /[.!?。！？:"“]$/u.test(before)
      const name = m[0].replace(/['’]s$/u, '')
      runs.push({ name, turn: t.id, opens })
      if (!opens) midSentence.add(nameKey(name))
    }
  }
  for (const r of runs) {
    const words = r.name.split(/\s+/)
    // a sentence's first word is a name only when the turns also write it capitalised mid-sentence
    const name = r.opens && !midSentence.has(nameKey(r.name)) ? words.slice(1).join(' ') : r.name
    if (name) note(name, r.turn)
  }
  return [...found.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}
