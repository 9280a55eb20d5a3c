/** A paragraph that opens like a figure's caption: `图 1`, `图1：`, `Figure 2.`, `Fig. 3`, `Illustration 1` (LibreOffice), `插图 2`. */
export const CAPTION_OPENING = /^\s*(?:图|插图|圖|Figure|Fig\.|Illustration|Image|Abbildung)\s*[0-9０-９一二三四五六七八九十]+/iu

/** At most this many characters of the sentences around a picture are kept as its context. */
const MAX_CONTEXT_CHARS = 300

/** The sentences of `before` nearest the picture and of `after` nearest it, at most MAX_CONTEXT_CHARS together. */
export function contextAround(before: string, after: string): string {
  const half = MAX_CONTEXT_CHARS / 2
  const b = before.replace(/\s+/g, ' ').trim()
  const a = after.replace(/\s+/g, ' ').trim()
  const left = b.length > half ? lastSentences(b, half) : b
  const right = a.length > half ? firstSentences(a, half) : a
  return [left, right].filter((s) => s !== '').join(' ')
}

const SENTENCE_END = /[。！？!?；;]|\.(?=\s|$)/gu

function lastSentences(text: string, max: number): string {
  const tail = text.slice(-max)
  const ends = [...tail.matchAll(SENTENCE_END)].map((m) => m.index! + m[0].length)
  // the last whole sentences that fit, when one ends inside the tail before its last character
  const cut = ends.find((e) => e < tail.length - 1)
  return (cut !== undefined ? tail.slice(cut) : tail).trim()
}

function firstSentences(text: string, max: number): string {
  const head = text.slice(0, max)
  const ends = [...head.matchAll(SENTENCE_END)].map((m) => m.index! + m[0].length)
  const cut = ends.at(-1)
  return (cut !== undefined ? head.slice(0, cut) : head).trim()
}
