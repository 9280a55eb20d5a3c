/**
 * The text the lexical leg indexes for a chunk: its text, after its document's title for every chunk but the
 * first (which holds the title already). The embedded index and the lexical leg on Qdrant take it from here.
 */
export function lexicalText(chunk: { text: string; title?: string | undefined; chunk_index: number }): string {
  return chunk.title && chunk.chunk_index > 0 ? `${chunk.title}\n${chunk.text}` : chunk.text
}
