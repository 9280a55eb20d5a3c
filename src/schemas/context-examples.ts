/**
 * Named examples of `POST /context` for Swagger UI: one per mode and one per format (a body and its answer,
 * packed from the `/retrieve` examples with the `characters` tokenizer, so they need no encoding table).
 */
import { pack, type PackItem } from '../context/pack.js'
import { characters } from '../context/tokenizers.js'
import { retrieveResponseExamples } from './examples.js'

const named = <T>(summary: string, value: T) => ({ summary, value })

export const contextBodyExamples = {
  hybrid_markdown: named('hybrid, packed as Markdown within 2,000 tokens (o200k_base)', {
    mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 8, max_tokens: 2000, tokenizer: 'o200k_base', format: 'markdown'
  }),
  graphrag_xml: named('graphrag with each entity\'s evidence chunks, one XML element per source', {
    mode: 'graphrag', query: '谁负责鉴权中间件', top_k: 5, max_tokens: 1500, tokenizer: 'cl100k_base', format: 'xml', evidence: 'include', max_evidence_per_item: 2
  }),
  episodic_text: named('episodic in summary display mode, as plain text', {
    mode: 'episodic', query: '鉴权故障的根因是什么', top_k: 3, max_tokens: 1000, format: 'text', episodic: { display_mode: 'summary' }
  }),
  hybrid_jsonl: named('hybrid, one JSON object per line, counted in characters, weak items left out', {
    mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 8, max_tokens: 400, tokenizer: 'characters', format: 'jsonl', min_score: 0.01
  })
}

const chunks: Record<string, { text: string; source: string; title: string }> = {
  'auth-middleware#0': { text: '# 鉴权中间件\n\n鉴权中间件（qh-auth）校验问诊网关和各后端服务的访问令牌，由安全组维护，组长李婉清。', source: 'engineering/auth-middleware.md', title: '鉴权中间件' },
  'auth-middleware#1': { text: '## 令牌校验\n\n令牌使用 RS256 签名，公钥每 10 分钟从密钥服务刷新一次。', source: 'engineering/auth-middleware.md', title: '鉴权中间件' }
}

function answer(example: { value: { mode: string; query: string; namespace: string; recall_bundle: PackItem[]; legs: unknown[]; match_strength: string } },
  maxTokens: number, format: 'markdown' | 'xml' | 'text' | 'jsonl') {
  const r = example.value
  const packed = pack(r.recall_bundle, {
    maxTokens, counter: characters, format, evidence: 'include', maxEvidencePerItem: 2, chunk: (id) => chunks[id]
  })
  return {
    mode: r.mode, query: r.query, namespace: r.namespace, format, tokenizer: 'characters', max_tokens: maxTokens, ...packed,
    match_strength: r.match_strength, legs: r.legs, cached: false, packing_ms: 0.041, took_ms: 3.52
  }
}

export const contextResponseExamples = {
  hybrid_markdown: named('hybrid as Markdown', answer(retrieveResponseExamples.hybrid, 2000, 'markdown')),
  graphrag_xml: named('graphrag as XML, the entity then its evidence chunks', answer(retrieveResponseExamples.graphrag, 1500, 'xml')),
  episodic_text: named('episodic as text (the Episode rendered in its display mode)', answer(retrieveResponseExamples.episodic, 1000, 'text')),
  hybrid_jsonl: named('hybrid as JSON lines, cut to the budget', answer(retrieveResponseExamples.hybrid, 200, 'jsonl'))
}
