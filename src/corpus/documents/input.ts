import type { DocumentMetadata } from '../../kernel/document-fields.js'
import type { ImageInput } from '../images/image-input.js'

export interface DocumentInput {
  id: string
  text: string
  source?: string
  title?: string
  metadata?: DocumentMetadata
  /** The document's pictures (src/corpus/appliers/images.ts): written beside its chunks, replacing the ones it had. */
  images?: ImageInput[]
}
