import { analyze, ANALYZER_VERSION } from './cjk-analyzer.js'
import { analyzeEnglish, ENGLISH_ANALYZER_VERSION } from './english-analyzer.js'

/**
 * Analyzers by name, so that a worker thread can be told which one to run. `cjk-bigram` is the service's;
 * `cjk-bigram-english` is it with English words stemmed (`LEXICAL_STEMMING`, on with the English model);
 * `whitespace` (NFKC, lowercase, split on spaces, punctuation and symbols) exists for the quality comparison in bench/.
 */
export const ANALYZERS = {
  'cjk-bigram': analyze,
  'cjk-bigram-english': analyzeEnglish,
  whitespace: (text: string): string[] => text.normalize('NFKC').toLowerCase().split(/[\s\p{P}\p{S}]+/u).filter(Boolean)
} as const

export type AnalyzerName = keyof typeof ANALYZERS

/** The analyzers the service indexes with (`whitespace` is for benches only). */
export type ServiceAnalyzer = Exclude<AnalyzerName, 'whitespace'>

/**
 * The name and version a lexical index, a chunk's `versions.analyzer` and a Qdrant collection's lexical settings
 * record: another tag means other tokens (`cjk-bigram@2` as before; the English one adds its own version).
 */
export function analyzerTag(name: AnalyzerName): string {
  return name === 'cjk-bigram-english' ? `${name}@${ANALYZER_VERSION}.${ENGLISH_ANALYZER_VERSION}` : `${name}@${ANALYZER_VERSION}`
}
