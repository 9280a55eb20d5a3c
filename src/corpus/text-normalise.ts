/**
 * Characters that carry no meaning in a document's text, removed before the junk check (docs/formats.md, "Junk,
 * normalised characters"): C0 control characters other than tab, line feed, vertical tab, form feed (a PDF's page
 * break) and carriage return; DEL; the zero-width space U+200B; and the invisible joiners U+00AD (soft hyphen),
 * U+2060 (word joiner) and U+FEFF (a byte-order mark inside the text). A stray U+001A in a search-result title is
 * one of them: it is dropped, not a reason to refuse the title.
 *
 * C1 controls (U+0080–U+009F), U+FFFD and lone surrogates are not removed: they are what a wrong decoding leaves, and
 * the junk check ({@link ./text-junk.ts}) still counts them.
 */

/** The normalised text, and how many characters were removed or replaced by a space. */
export interface NormalisedText {
  text: string
  normalised: number
}

/** Removed, or replaced by a space when it stands between two letters or digits of a script that spaces its words. */
const SEPARATING = /[\u0000-\u0008\u000E-\u001F\u007F\u200B]/u
/** Removed always: they join what is around them. */
const JOINING = /[\u00AD\u2060\uFEFF]/u
const MEANINGLESS = /[\u0000-\u0008\u000E-\u001F\u007F\u200B\u00AD\u2060\uFEFF]/u
const WORD_CHAR = /[\p{L}\p{N}]/u
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u

/**
 * The text without its meaningless characters. One that stood between two letters or digits of a script that puts
 * spaces between words (`word\u001Aword`) becomes a space, so that the words stay two; elsewhere (between Chinese
 * characters, beside a space or punctuation, a run of them) it is removed. The text is returned as given when it
 * holds none.
 */
export function normaliseText(text: string): NormalisedText {
  if (!MEANINGLESS.test(text)) return { text, normalised: 0 }
  const chars = [...text]
  let normalised = 0
  let out = ''
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!
    if (!SEPARATING.test(ch) && !JOINING.test(ch)) {
      out += ch
      continue
    }
    // a run of them counts each, and is one separator at most
    let end = i
    while (end + 1 < chars.length && (SEPARATING.test(chars[end + 1]!) || JOINING.test(chars[end + 1]!))) end++
    normalised += end - i + 1
    const run = chars.slice(i, end + 1)
    const before = chars[i - 1]
    const after = chars[end + 1]
    if (run.some((c) => SEPARATING.test(c)) && spacedWord(before) && spacedWord(after)) out += ' '
    i = end
  }
  return { text: out, normalised }
}

function spacedWord(ch: string | undefined): boolean {
  return ch !== undefined && WORD_CHAR.test(ch) && !UNSPACED_SCRIPT.test(ch)
}
