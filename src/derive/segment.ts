/**
 * The entity mentions of one sentence: terms kept whole first (the user dictionary and the document's marked spans,
 * longest first, then the document's frequent n-grams, then Latin-script terms), then jieba's words with parts of speech over the text between them, where
 * runs of consecutive nouns make one name (`身份/n 校验/n 组件/n` → `身份校验组件`).
 */
import { Jieba } from '@node-rs/jieba'
import { dict } from '@node-rs/jieba/dict.js'
import { latinTerms } from './latin.js'
import { nameKey } from './normalise.js'
import type { DerivationOptions } from './options.js'

export interface Mention {
  /** As written. */
  name: string
  key: string
  /** UTF-16 offsets in the sentence. */
  start: number
  end: number
  type?: string
}

let shared: Jieba | undefined
/** jieba with its default dictionary, loaded on first use (about 0.3 s) and never changed: no state between documents. */
function jieba(): Jieba {
  shared ??= Jieba.withDict(dict)
  return shared
}

/** jieba's words of `text` (default dictionary, HMM off), in order. */
export function words(text: string): string[] {
  return jieba().cut(text, false)
}

/** The words to keep whole, longest first, so `平台组长` wins over `平台组` where both are listed. */
export function wholeTerms(terms: Iterable<string>): string[] {
  return [...new Set(terms)].filter((t) => t.trim() !== '').sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * The mentions in `sentence`, left to right, none overlapping. `whole` are the terms kept whole, matched in that order
 * (see `wholeTerms`);
 * a mention whose key is a stop word, or whose length is outside the options' bounds, is left out.
 */
export function mentionsOf(sentence: string, whole: readonly string[], options: DerivationOptions): Mention[] {
  const stop = stopSet(options)
  const taken: Mention[] = []
  const lower = sentence.toLowerCase()
  const free = (start: number, end: number) => taken.every((m) => end <= m.start || start >= m.end)
  for (const term of whole) {
    const needle = term.toLowerCase()
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) {
      if (free(at, at + needle.length) && !splitsLatinWord(sentence, at, at + needle.length)) {
        taken.push({ name: sentence.slice(at, at + needle.length), key: nameKey(term), start: at, end: at + needle.length, ...termType(term, options) })
      }
    }
  }
  for (const span of latinTerms(sentence)) {
    if (free(span.start, span.end)) taken.push({ name: span.text, key: nameKey(span.text), start: span.start, end: span.end, type: options.termType })
  }
  taken.sort((a, b) => a.start - b.start)

  const mentions: Mention[] = []
  let cursor = 0
  for (const m of [...taken, undefined]) {
    const gapEnd = m ? m.start : sentence.length
    if (gapEnd > cursor) mentions.push(...nounPhrases(sentence.slice(cursor, gapEnd), cursor, options))
    if (m) {
      mentions.push(m)
      cursor = m.end
    }
  }
  return mentions.filter((m) => keep(m, stop, options))
}

/** Runs of consecutive noun words of a text without kept terms, with their offsets shifted by `offset`. */
function nounPhrases(text: string, offset: number, options: DerivationOptions): Mention[] {
  if (!/\p{Script=Han}/u.test(text)) return []
  const phrases: Mention[] = []
  let run: { start: number; end: number; type: string } | undefined
  const close = () => {
    if (run) {
      const name = text.slice(run.start, run.end)
      phrases.push({ name, key: nameKey(name), start: offset + run.start, end: offset + run.end, ...(run.type ? { type: run.type } : {}) })
    }
    run = undefined
  }
  let at = 0
  for (const { word, tag } of jieba().tag(text, false)) {
    const start = text.indexOf(word, at)
    const end = start + word.length
    at = end
    const type = options.nounTags[tag]
    // a one-character word is more often a fragment (平台/组, 李/婉/清) than a name part: it ends the run
    if (type === undefined || word.length < 2 || !/^\p{Script=Han}+$/u.test(word)) {
      close()
      continue
    }
    // the head noun (the last word) types the phrase: 仁和/nz 医院/n is untyped, 杭州/ns 仁和/nz is not a place
    if (run && run.end === start) run = { start: run.start, end, type }
    else {
      close()
      run = { start, end, type }
    }
  }
  close()
  return phrases
}

function keep(m: Mention, stop: ReadonlySet<string>, options: DerivationOptions): boolean {
  const length = [...m.key].length
  return length >= options.minNameLength && length <= options.maxNameLength && !stop.has(m.key) && /[\p{L}]/u.test(m.key)
}

/** A kept term that starts or ends inside a Latin word (`auth` inside `oauth2`) is no mention of it. */
function splitsLatinWord(text: string, start: number, end: number): boolean {
  const word = /[A-Za-z0-9]/
  return (start > 0 && word.test(text[start - 1]!) && word.test(text[start]!)) ||
    (end < text.length && word.test(text[end]!) && word.test(text[end - 1]!))
}

function termType(term: string, options: DerivationOptions): { type?: string } {
  return /\p{Script=Han}/u.test(term) ? {} : { type: options.termType }
}

const stopSets = new WeakMap<DerivationOptions, Set<string>>()
function stopSet(options: DerivationOptions): ReadonlySet<string> {
  let set = stopSets.get(options)
  if (!set) stopSets.set(options, (set = new Set(options.stopWords.map(nameKey))))
  return set
}
