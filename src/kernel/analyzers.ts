import { analyze } from './cjk-analyzer.js'

/**
 * Analyzers by name, so that a worker thread can be told which one to run. `cjk-bigram` is the service's;
 * `whitespace` (NFKC, lowercase, split on spaces, punctuation and symbols) exists for the quality comparison
 * in bench/.
 */
export const ANALYZERS = {
  'cjk-bigram': analyze,
  whitespace: (text: string): string[] => text.normalize('NFKC').toLowerCase().split(/[\s\p{P}\p{S}]+/u).filter(Boolean)
} as const

export type AnalyzerName = keyof typeof ANALYZERS
