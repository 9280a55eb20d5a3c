import { readFile } from 'node:fs/promises'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { CMRC_TRIAL } from './reference-data.js'

/** Where the development set lives: CMRC_PATH, else `data/` under RECALL_SHARED_DIR or `../shared` (see reference-data.ts). */
export const CMRC_PATH = CMRC_TRIAL.path

export interface LabelledQuery {
  query: string
  relevant_ids: string[]
}

interface Squad {
  data: { id: string; title: string; paragraphs: { id: string; context: string; qas: { id: string; question: string }[] }[] }[]
}

/** CMRC 2018 trial as a retrieval set: each paragraph a document (id = its paragraph id), each question a query. */
export async function loadCmrc(path = CMRC_PATH): Promise<{ documents: DocumentInput[]; queries: LabelledQuery[] }> {
  const squad = JSON.parse(await readFile(path, 'utf8')) as Squad
  const documents: DocumentInput[] = []
  const queries: LabelledQuery[] = []
  for (const article of squad.data) {
    for (const p of article.paragraphs) {
      documents.push({ id: p.id, text: p.context, source: `cmrc2018_trial/${p.id}` })
      for (const qa of p.qas) queries.push({ query: qa.question, relevant_ids: [p.id] })
    }
  }
  return { documents, queries }
}
