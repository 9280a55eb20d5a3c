import type { DocumentMetadata } from '../../kernel/document-fields.js'

export interface DocumentInput {
  id: string
  text: string
  source?: string
  title?: string
  metadata?: DocumentMetadata
}
