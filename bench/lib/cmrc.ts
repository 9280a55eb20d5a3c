import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { DocumentInput } from '../../src/ingest/documents.js'

/** Where the development set lives: `../shared/data/` beside the repository, or CMRC_PATH. */
export const CMRC_PATH = process.env.CMRC_PATH ?? resolve(import.meta.dirname, '../../../shared/data/cmrc2018_trial.json')

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
