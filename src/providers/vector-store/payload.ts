/** What a vector record carries besides its vector: its document, its text, and whatever the writer adds. */
export interface VectorPayload {
  doc_id: string
  text: string
  [key: string]: unknown
}
