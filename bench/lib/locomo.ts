/**
 * LoCoMo-10 (github snap-research/LoCoMo, `data/locomo10.json`) as a judged set of turns: each turn one text
 * (`<speaker>: <text>`, plus `[photo: <caption>]` where the turn shares one), each category 1-4 question with the turns
 * its `evidence` names. The data is not in this repository: `LOCOMO_JSON` names the file (default
 * `../locomo-english/locomo10.json`, beside the worktree). Conversations 0 and 1 are held out: the team checks them.
 */
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'

interface LocomoTurn { id: string; text: string }
interface LocomoQuestion { question: string; category: 1 | 2 | 3 | 4; evidence: string[] }
export interface LocomoConversation { index: number; turns: LocomoTurn[]; questions: LocomoQuestion[] }

interface RawTurn { speaker: string; dia_id: string; text: string; blip_caption?: string }
interface RawSample { conversation: Record<string, unknown>; qa: Array<{ question: string; category: number; evidence?: unknown }> }

const DEVELOPMENT_CONVERSATIONS = [2, 3, 4, 5, 6, 7, 8, 9] as const

export async function loadLocomo(indices: readonly number[] = DEVELOPMENT_CONVERSATIONS): Promise<LocomoConversation[]> {
  const file = resolve(process.env['LOCOMO_JSON'] ?? '../locomo-english/locomo10.json')
  const samples = JSON.parse(await readFile(file, 'utf8')) as RawSample[]
  return indices.map((index) => {
    const sample = samples[index]
    if (!sample) throw new Error(`${file} has no conversation ${index}`)
    const turns: LocomoTurn[] = []
    for (const [key, value] of Object.entries(sample.conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue
      for (const t of value as RawTurn[]) {
        turns.push({ id: t.dia_id, text: `${t.speaker}: ${t.text}${t.blip_caption ? ` [photo: ${t.blip_caption}]` : ''}` })
      }
    }
    const known = new Set(turns.map((t) => t.id))
    const questions: LocomoQuestion[] = []
    for (const qa of sample.qa) {
      if (![1, 2, 3, 4].includes(qa.category)) continue
      // a few evidence entries hold several ids in one string ("D8:6; D9:17")
      const evidence = [...new Set((Array.isArray(qa.evidence) ? qa.evidence : []).flatMap((e) => String(e).split(/[;,\s]+/)).filter((e) => known.has(e)))]
      if (evidence.length > 0) questions.push({ question: qa.question, category: qa.category as 1 | 2 | 3 | 4, evidence })
    }
    return { index, turns, questions }
  })
}
