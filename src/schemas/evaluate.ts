import { Type, type Static } from 'typebox'
import { CompareArmSchema } from './compare.js'
import { NamespaceSchema, TopKSchema } from './common.js'

export const EvaluateBodySchema = Type.Object({
  judged_set: Type.String({
    minLength: 1,
    description: 'The judged questions as JSONL, one object a line: `{"id"?, "query", "relevant": {"ids"?, "doc_ids"?, "sources"?, ' +
      '"answers"?}, "match"?: "all" | "any"}`. An item is relevant when it has one of the `ids`, stands on one of the `doc_ids` ' +
      '(a hybrid chunk\'s document; a graphrag item\'s source chunks\' documents), has one of the `sources` (`episode:<id>` for an ' +
      'Episode), or its text contains one of the `answers` (NFKC, case-folded). `match: all` (default) counts every target in ' +
      'Recall; `any` makes them alternatives. A malformed line is a 400 naming the line and the field; nothing is evaluated.'
  }),
  arms: Type.Array(CompareArmSchema, {
    minItems: 1, maxItems: 6,
    description: 'One to six arms, each a `POST /retrieve` body without `query` and `top_k` (as in `/retrieve/compare`): any ' +
      'modes, any options. Two identical arms are refused.'
  }),
  namespace: Type.Optional(Type.String({ ...NamespaceSchema, description: 'The namespace of every arm that names none (default `default`).' })),
  top_k: Type.Optional(Type.Integer({ ...TopKSchema, description: 'Items each arm is asked for (1..100, default 10, at least the largest `ks`).' })),
  ks: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
    minItems: 1, maxItems: 5, uniqueItems: true, description: 'Cut-offs of Recall@k, default `[1, 5, 10]`.'
  })),
  resamples: Type.Optional(Type.Integer({ minimum: 100, maximum: 10_000, description: 'Bootstrap resamples, default 1000.' })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4_294_967_295, description: 'Seed of the bootstrap resamples, default 42: the same set and seed give the same intervals.' })),
  async: Type.Optional(Type.Boolean({
    description: 'Run as a job (202, then `GET /evaluate/jobs/{id}`) even when small. Sets of more than 200 question × arm ' +
      'runs always run as a job.'
  }))
}, { additionalProperties: false })
export type EvaluateBody = Static<typeof EvaluateBodySchema>

const IntervalSchema = Type.Object({
  mean: Type.Number({ description: 'Mean over the questions.' }),
  ci_low: Type.Number({ description: 'Lower end of the 95% percentile-bootstrap interval.' }),
  ci_high: Type.Number({ description: 'Upper end of the 95% percentile-bootstrap interval.' })
}, { description: 'A mean with its 95% bootstrap interval.' })

const Metrics = (description: string) => Type.Record(Type.String(), IntervalSchema, { description })

export const EvaluationReportSchema = Type.Object({
  namespace: Type.String({ description: 'The evaluation\'s namespace (arms may name their own).' }),
  top_k: Type.Integer({ description: 'Items each arm was asked for.' }),
  questions: Type.Integer({ description: 'Questions evaluated.' }),
  ks: Type.Array(Type.Integer(), { description: 'Cut-offs of Recall@k.' }),
  bootstrap: Type.Object({
    resamples: Type.Integer(), seed: Type.Integer(), confidence: Type.Number()
  }, { description: 'How the intervals were drawn: resamples of whole questions, with replacement, from a seeded generator.' }),
  arms: Type.Array(Type.Object({
    arm: Type.Integer({ description: 'Index of the arm in the request, from 0.' }),
    label: Type.String({ description: 'The arm\'s mode and options, e.g. `hybrid fusion=convex alpha=0.6`.' }),
    errors: Type.Integer({ description: 'Questions the arm failed on (counted as finding nothing).' }),
    first_error: Type.Optional(Type.String({ description: 'The first failure\'s message.' })),
    metrics: Metrics('`recall_at_<k>` for each k, `mrr_at_10` and `ndcg_at_10`, each with its interval.'),
    latency_ms: Type.Object({
      p50: Type.Number(), p90: Type.Number(), p95: Type.Number(), p99: Type.Number(), max: Type.Number()
    }, { description: 'The arm\'s retrieval time per question in the service (nearest-rank percentiles), response cache bypassed.' })
  }), { description: 'One entry per arm, in the request\'s order.' }),
  differences: Type.Array(Type.Object({
    arms: Type.Array(Type.Integer(), { minItems: 2, maxItems: 2, description: '`[a, b]`, a < b.' }),
    labels: Type.Array(Type.String(), { minItems: 2, maxItems: 2 }),
    metrics: Metrics('Per metric, the mean per-question difference b − a with its paired bootstrap interval (an interval ' +
      'that excludes 0 is a difference the set supports).')
  }), { description: 'Every pair of arms.' }),
  per_question: Type.Array(Type.Object({
    id: Type.String(), line: Type.Integer(), query: Type.String(),
    first_relevant_rank: Type.Array(Type.Union([Type.Integer(), Type.Null()]), { description: 'Per arm, the rank (from 1) of the first relevant item, null when none is in its top_k.' })
  }), { description: 'Per question, in the set\'s order.' }),
  took_ms: Type.Number({ description: 'Wall time of the evaluation.' })
}, { description: 'Per-arm metrics with bootstrap intervals, paired differences, latencies and per-question ranks.' })
export type EvaluationReportBody = Static<typeof EvaluationReportSchema>

export const EvaluationJobSchema = Type.Object({
  id: Type.String({ description: 'The job\'s id.' }),
  status: Type.Enum(['running', 'done', 'failed', 'cancelled'], { description: 'Where the job is.' }),
  progress: Type.Object({
    done: Type.Integer({ description: 'Question × arm runs done.' }),
    total: Type.Integer({ description: 'Question × arm runs in all.' })
  }),
  created_at: Type.String({ description: 'When it started (ISO 8601).' }),
  status_url: Type.String({ description: 'Where to poll it (`GET`) or cancel it (`DELETE`).' }),
  error: Type.Optional(Type.String({ description: 'Why it failed or was cancelled.' })),
  result: Type.Optional(EvaluationReportSchema)
}, { description: 'An evaluation run as a job. Jobs live in the process that runs them, for an hour after they end.' })
export type EvaluationJobBody = Static<typeof EvaluationJobSchema>
