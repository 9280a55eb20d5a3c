/**
 * Named examples for Swagger UI, one per mode, taken from answers over the demo world (texts shortened).
 * They go into the OpenAPI document as `x-examples` (request bodies) and as named response examples.
 */

const named = <T>(summary: string, value: T) => ({ summary, value })

const hybridAnswer = {
  mode: 'hybrid',
  query: '咳嗽三周以上要做什么检查',
  namespace: 'default',
  recall_bundle: [{
    id: 'cough-guide#3',
    text: '## 第三节 咳嗽三周以上的检查\n\n咳嗽持续 3 周以上，应完善胸部 X 线（胸片）和血常规检查。咳嗽超过 8 周且胸片正常时，进一步做胸部 CT、肺功能检查…',
    score: 0.032787, source: 'clinical/cough-guide.md', mode: 'hybrid',
    metadata: {
      rank: 1, score_kind: 'rrf', doc_id: 'cough-guide', chunk_index: 3, title: '成人咳嗽诊疗指引',
      legs: { vector: { rank: 1, score: 0.7771 }, lexical: { rank: 1, score: 27.5228 } },
      rrf: { k: 60, contributions: { vector: 0.016393, lexical: 0.016393 } }
    }
  }],
  legs: [
    { name: 'embedding', status: 'ok', took_ms: 2.93, hits: 1 },
    { name: 'vector', status: 'ok', took_ms: 0.28, hits: 50 },
    { name: 'lexical', status: 'ok', took_ms: 0.55, hits: 32 }
  ],
  match_strength: 'strong', cached: false, took_ms: 3.39
}

const graphragAnswer = {
  mode: 'graphrag',
  query: '谁负责鉴权中间件',
  namespace: 'default',
  recall_bundle: [{
    id: 'e-auth',
    text: '鉴权中间件 [系统] (aliases: qh-auth, auth middleware): 问诊网关和各后端服务共用的令牌校验组件…\n李婉清 -[负责]-> 鉴权中间件: 鉴权中间件由安全组组长李婉清负责',
    score: 1, source: 'engineering/auth-middleware.md', mode: 'graphrag',
    metadata: {
      rank: 1, score_kind: 'graph_match', entity_id: 'e-auth', entity_name: '鉴权中间件', matched_by: 'name', hop: 0,
      relations: [{ type: '负责', source: 'e-li-wanqing', target: 'e-auth', description: '鉴权中间件由安全组组长李婉清负责' }],
      source_chunk_ids: ['auth-middleware#0', 'auth-middleware#1', 'incident-2025-06-auth#0']
    }
  }],
  legs: [{ name: 'graph', status: 'ok', took_ms: 0.56, hits: 15 }],
  match_strength: 'strong', cached: false, took_ms: 0.58
}

/** 血糖太低 names no entity: 低血糖 is reached by its name's vector (ENTITY_VECTORS), its neighbour one hop away. */
const graphragMeaningAnswer = {
  mode: 'graphrag',
  query: '血糖太低的时候病人该吃什么',
  namespace: 'default',
  recall_bundle: [{
    id: 'e-hypoglycemia',
    text: '低血糖 [疾病]: 血糖低于 3.9 mmol/L，清醒者口服 15 至 20 g 葡萄糖\n低血糖 -[关联]-> 2 型糖尿病: 血糖低于 3.9 mmol/L，平台 30 分钟内通知护士',
    score: 0.8923, source: 'clinical/diabetes-followup.md', mode: 'graphrag',
    metadata: {
      rank: 1, score_kind: 'graph_match', entity_id: 'e-hypoglycemia', entity_name: '低血糖', matched_by: 'meaning', hop: 0,
      similarity: 0.7307, meaning_text: '低血糖',
      relations: [{ type: '关联', source: 'e-hypoglycemia', target: 'e-t2dm', description: '血糖低于 3.9 mmol/L，平台 30 分钟内通知护士' }],
      source_chunk_ids: ['diabetes-followup#1', 'diabetes-followup#4'], derived: false,
      evidence: [{ chunk_id: 'diabetes-followup#1', weight: 0.8923 }, { chunk_id: 'diabetes-followup#4', weight: 0.631 }]
    }
  }, {
    id: 'e-t2dm',
    text: '2 型糖尿病 [疾病] (aliases: 2型糖尿病): HbA1c 目标多数低于 7.0%，每 3 个月复查\n低血糖 -[关联]-> 2 型糖尿病: 血糖低于 3.9 mmol/L，平台 30 分钟内通知护士',
    score: 0.6, source: 'clinical/diabetes-followup.md', mode: 'graphrag',
    metadata: {
      rank: 2, score_kind: 'graph_match', entity_id: 'e-t2dm', entity_name: '2 型糖尿病', matched_by: 'meaning', hop: 1,
      relations: [{ type: '关联', source: 'e-hypoglycemia', target: 'e-t2dm', description: '血糖低于 3.9 mmol/L，平台 30 分钟内通知护士' }],
      source_chunk_ids: ['diabetes-followup#0'], derived: false,
      evidence: [{ chunk_id: 'diabetes-followup#0', weight: 0.6 }]
    }
  }],
  legs: [{ name: 'graph', status: 'ok', took_ms: 60.43, hits: 2 }],
  match_strength: 'weak', cached: false, took_ms: 61.05
}

const episodicAnswer = {
  mode: 'episodic',
  query: '鉴权故障的根因是什么',
  namespace: 'default',
  recall_bundle: [{
    id: 'ep-auth-token-incident',
    text: '[June 14, 2025] [鉴权令牌校验故障]\n【经过】2025 年 6 月 14 日 10:00 执行签名密钥轮换…【根因】轮换脚本在发布新公钥的同时切换私钥，而公钥在进程内缓存 10 分钟…',
    score: 0.869565, source: 'episode:ep-auth-token-incident', mode: 'episodic',
    metadata: {
      rank: 1, score_kind: 'bundle_cost', cost: 0.15, best_path: 'facet',
      best_support_id: 'f-auth-token-incident-1', best_facet_id: 'f-auth-token-incident-1', best_point_id: null, best_entity_id: null,
      support_similarity: 0.5378, name: '鉴权令牌校验故障', time: 'June 14, 2025',
      mentioned_time_start: '2025-06-14T10:05:00.000Z', mentioned_time_end: '2025-06-14T10:42:00.000Z', created_at: '2025-06-16T10:00:00.000Z',
      display_mode: 'summary',
      query: { vector_query: '鉴权故障的根因', keyword_terms: [], hybrid_reason: null, time_range: null, vector_limit: 100 }
    }
  }],
  legs: [
    { name: 'embedding', status: 'ok', took_ms: 2.55, hits: 1 },
    { name: 'vector', status: 'ok', took_ms: 14.17, hits: 455 },
    { name: 'graph', status: 'ok', took_ms: 12.5, hits: 263 }
  ],
  match_strength: 'medium', cached: false, took_ms: 32.77, generation: 1764580000000042
}

/** `POST /retrieve` bodies, one per mode with that mode's options. */
export const retrieveBodyExamples = {
  hybrid: named('hybrid with RRF (`rrf_k` and `weights` imply `fusion: rrf`), every RRF option', {
    mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 5, legs: ['vector', 'lexical'], rrf_k: 60, window: 50, weights: { vector: 1, lexical: 1 }
  }),
  hybrid_graph: named('hybrid with the graph leg: the passages of the entities the question names and of their neighbours, fused with the other two legs', {
    mode: 'hybrid', query: '智能分诊服务依赖什么', top_k: 5, legs: ['vector', 'lexical', 'graph'], graph_weight: 0.3
  }),
  hybrid_lexical: named('hybrid: the BM25 leg alone', { mode: 'hybrid', query: '财务〔2024〕17号 一线城市住宿标准', top_k: 5, legs: ['lexical'] }),
  hybrid_filtered: named('hybrid: in one namespace, only some documents (filter)', {
    mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 5, namespace: 'default',
    filter: { source_prefix: 'clinical/', metadata: { lang: 'zh', year: { gte: 2020 }, audience: { any_of: ['adult', 'all'] } } }
  }),
  graphrag: named('graphrag: entities named in the question and their relations', { mode: 'graphrag', query: '谁负责鉴权中间件', top_k: 5, max_relations: 5 }),
  graphrag_meaning: named('graphrag: a question that names no entity reaches one by meaning (ENTITY_VECTORS)', { mode: 'graphrag', query: '血糖太低的时候病人该吃什么', top_k: 5 }),
  episodic: named('episodic: Episodes and the path that explains each', {
    mode: 'episodic', query: '鉴权故障的根因是什么', top_k: 3, episodic: { display_mode: 'summary', hop_cost: 0.05 }
  }),
  read_your_writes: named('hybrid, read-your-writes: only from state that includes the write which answered this generation', {
    mode: 'hybrid', query: '夜间告警由谁处理', top_k: 5, min_generation: 1764580000000042
  })
}

/** `/retrieve` answers, one per mode. */
export const retrieveResponseExamples = {
  hybrid: named('hybrid with `fusion: rrf`: per-leg ranks and RRF contributions', hybridAnswer),
  graphrag: named('graphrag: the matched entity, its relations and the chunks it cites', graphragAnswer),
  graphrag_meaning: named('graphrag: 低血糖 reached by meaning (`matched_by: meaning`, `similarity`), its neighbour one hop away', graphragMeaningAnswer),
  episodic: named('episodic: the winning path and its evidence', episodicAnswer)
}

/** `POST /retrieve/compare` bodies. */
export const compareBodyExamples = {
  hybrid_vs_graphrag: named('hybrid against graphrag', {
    query: '左氧氟沙星能给孩子用吗', top_k: 5, arms: [{ mode: 'hybrid' }, { mode: 'graphrag', max_relations: 5 }]
  }),
  hybrid_legs: named('hybrid with both legs against the BM25 leg alone', {
    query: '咳嗽三周以上要做什么检查', top_k: 5, arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }]
  }),
  three_modes: named('all three modes', {
    query: '鉴权故障的根因是什么', top_k: 5, arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }, { mode: 'episodic', episodic: { display_mode: 'summary' } }]
  })
}

/** `/retrieve/compare` answers: a comparison, and an arm failing with a 503. */
export const compareResponseExamples = {
  hybrid_vs_graphrag: named('hybrid against graphrag: different ids, the same chunks as evidence', {
    query: '左氧氟沙星能给孩子用吗',
    top_k: 2,
    arms: [
      {
        arm: 0, mode: 'hybrid', evidence: ['antibiotic-stewardship#2', 'antibiotic-stewardship#1'],
        response: {
          mode: 'hybrid', query: '左氧氟沙星能给孩子用吗', namespace: 'default',
          recall_bundle: [{
            id: 'antibiotic-stewardship#2', text: '## 第二节 常见禁忌\n\n左氧氟沙星等喹诺酮类药物禁用于 18 岁以下患者和孕妇…',
            score: 0.032522, source: 'clinical/antibiotic-stewardship.md', mode: 'hybrid',
            metadata: {
              rank: 1, score_kind: 'rrf', doc_id: 'antibiotic-stewardship', chunk_index: 2, title: '抗菌药物合理使用管理规定',
              legs: { vector: { rank: 1, score: 0.5617 }, lexical: { rank: 2, score: 15.368 } },
              rrf: { k: 60, contributions: { vector: 0.016393, lexical: 0.016129 } }
            }
          }, {
            id: 'antibiotic-stewardship#1', text: '## 第一节 分级管理\n\n抗菌药物分为非限制使用级、限制使用级和特殊使用级…',
            score: 0.032266, source: 'clinical/antibiotic-stewardship.md', mode: 'hybrid',
            metadata: {
              rank: 2, score_kind: 'rrf', doc_id: 'antibiotic-stewardship', chunk_index: 1, title: '抗菌药物合理使用管理规定',
              legs: { vector: { rank: 3, score: 0.5326 }, lexical: { rank: 1, score: 15.7532 } },
              rrf: { k: 60, contributions: { vector: 0.015873, lexical: 0.016393 } }
            }
          }],
          legs: [
            { name: 'embedding', status: 'ok', took_ms: 0.66, hits: 1 },
            { name: 'vector', status: 'ok', took_ms: 0.37, hits: 50 },
            { name: 'lexical', status: 'ok', took_ms: 0.44, hits: 2 }
          ],
          match_strength: 'strong', cached: false, took_ms: 1.15
        }
      },
      {
        arm: 1, mode: 'graphrag', evidence: ['antibiotic-stewardship#1', 'antibiotic-stewardship#2'],
        response: {
          mode: 'graphrag', query: '左氧氟沙星能给孩子用吗', namespace: 'default',
          recall_bundle: [{
            id: 'e-levofloxacin', text: '左氧氟沙星 [药品]: 限制使用级喹诺酮类药物，18 岁以下和孕妇禁用\n左氧氟沙星 -[禁忌]-> 18 岁以下患者: 18 岁以下患者禁用',
            score: 1, source: 'clinical/antibiotic-stewardship.md', mode: 'graphrag',
            metadata: {
              rank: 1, score_kind: 'graph_match', entity_id: 'e-levofloxacin', entity_name: '左氧氟沙星', matched_by: 'name', hop: 0,
              relations: [{ type: '禁忌', source: 'e-levofloxacin', target: 'e-minors', description: '18 岁以下患者禁用' }],
              source_chunk_ids: ['antibiotic-stewardship#1', 'antibiotic-stewardship#2']
            }
          }],
          legs: [{ name: 'graph', status: 'ok', took_ms: 0.21, hits: 4 }],
          match_strength: 'strong', cached: false, took_ms: 0.22
        }
      }
    ],
    comparison: [{
      arms: [0, 1], common_ids: [], common_evidence: ['antibiotic-stewardship#2', 'antibiotic-stewardship#1'],
      common_sources: ['clinical/antibiotic-stewardship.md'], sources_jaccard: 1, evidence_rbo: 0.9,
      took_ms: [1.15, 0.22], match_strength: ['strong', 'strong']
    }],
    took_ms: 1.41
  }),
  failed_arm: named('one arm failed: its error in place, the other arm answered', {
    query: '谁负责鉴权中间件',
    top_k: 1,
    arms: [
      {
        arm: 0, mode: 'hybrid', evidence: ['auth-middleware#0'],
        response: {
          mode: 'hybrid', query: '谁负责鉴权中间件', namespace: 'default',
          recall_bundle: [{
            id: 'auth-middleware#0', text: '# 鉴权中间件 v3 设计说明\n\n鉴权中间件（qh-auth…）是问诊网关和各后端服务共用的身份校验组件，由安全组组长李婉清负责…',
            score: 0.032787, source: 'engineering/auth-middleware.md', mode: 'hybrid',
            metadata: {
              rank: 1, score_kind: 'rrf', doc_id: 'auth-middleware', chunk_index: 0, title: '鉴权中间件 v3 设计说明',
              legs: { vector: { rank: 1, score: 0.686 }, lexical: { rank: 1, score: 14.2597 } },
              rrf: { k: 60, contributions: { vector: 0.016393, lexical: 0.016393 } }
            }
          }],
          legs: [
            { name: 'embedding', status: 'ok', took_ms: 2.65, hits: 1 },
            { name: 'vector', status: 'ok', took_ms: 0.22, hits: 50 },
            { name: 'lexical', status: 'ok', took_ms: 0.55, hits: 50 }
          ],
          match_strength: 'strong', cached: false, took_ms: 3.05
        }
      },
      { arm: 1, mode: 'graphrag', error: { statusCode: 503, code: 'RECALL_BACKEND_UNAVAILABLE', error: 'Service Unavailable', message: 'neo4j is unavailable: connection refused' } }
    ],
    comparison: [],
    took_ms: 3.4
  })
}
