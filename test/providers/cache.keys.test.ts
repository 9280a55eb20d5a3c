import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalJson, embeddingCacheKey, responseCacheKey } from '../../src/providers/cache/keys.js'

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex')

describe('cache keys', () => {
  it('canonicalJson sorts object keys at every depth, keeps array order and drops undefined', () => {
    const value = { b: 1, a: { d: [3, { z: 1, y: 2 }, undefined], c: 'x', u: undefined }, 中: null }
    expect(canonicalJson(value)).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1},null]},"b":1,"中":null}')
  })

  it('canonicalJson gives one string for objects that differ only in key order', () => {
    expect(canonicalJson({ top_k: 10, mode: 'hybrid', legs: ['vector', 'lexical'] })).toBe(
      canonicalJson({ legs: ['vector', 'lexical'], mode: 'hybrid', top_k: 10 })
    )
    expect(canonicalJson({ legs: ['vector', 'lexical'] })).not.toBe(canonicalJson({ legs: ['lexical', 'vector'] }))
  })

  it('canonicalJson follows toJSON as JSON.stringify does', () => {
    expect(canonicalJson({ at: new Date('2026-01-02T03:04:05.000Z') })).toBe('{"at":"2026-01-02T03:04:05.000Z"}')
  })

  it('embedding key is emb: plus sha256 of the JSON pair [model, text]', () => {
    expect(embeddingCacheKey('bge-small-zh-v1.5', '咳嗽')).toBe(`emb:${sha256('["bge-small-zh-v1.5","咳嗽"]')}`)
  })

  it('embedding keys cannot collide by moving text across the model/text boundary', () => {
    expect(embeddingCacheKey('a', 'bc')).not.toBe(embeddingCacheKey('ab', 'c'))
  })

  it('response key is resp:<mode>: plus sha256 of the canonical [mode, request, version]', () => {
    const key = responseCacheKey('hybrid', { top_k: 10, query: 'q' }, 7)
    expect(key).toBe(`resp:hybrid:${sha256('["hybrid",{"query":"q","top_k":10},"7"]')}`)
  })

  it('response key changes with the index version, the mode and any request field', () => {
    const request = { query: 'q', top_k: 10 }
    const base = responseCacheKey('hybrid', request, 1)
    expect(responseCacheKey('hybrid', { top_k: 10, query: 'q' }, 1)).toBe(base)
    expect(responseCacheKey('hybrid', request, 2)).not.toBe(base)
    expect(responseCacheKey('graphrag', request, 1)).not.toBe(base)
    expect(responseCacheKey('hybrid', { ...request, top_k: 11 }, 1)).not.toBe(base)
  })
})
