/** Questions of the load runs (`scripts/load.ts`, `bench/overload.ts`): one per part of the demo world. */
export const DEFAULT_QUERIES = [
  '咳嗽三周以上要做什么检查',
  'API 流式返回改造的变更边界',
  '报销差旅费需要哪些材料',
  '新员工入职第一周安排',
  '线上故障复盘流程',
  '季度预算如何审批',
  '鉴权中间件能不能改',
  '会议纪要里提到的发布时间'
]
