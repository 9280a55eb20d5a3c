/**
 * What derivation keeps and how it names things: word lists and thresholds, with the defaults `docs/derivation.md`
 * documents. A change of any of these changes what every document derives, so they are read once, at start-up.
 */
export interface DerivationOptions {
  /**
   * Terms the segmenter must keep whole (product, team, drug names), each an entity candidate wherever it occurs.
   * Default none.
   */
  userDictionary: readonly string[]
  /** Names never kept as entities, compared after normalisation (NFKC, case-folded). Default `DEFAULT_STOP_WORDS`. */
  stopWords: readonly string[]
  /**
   * Part-of-speech tags of jieba (its ICTCLAS set) whose words are entity candidates, with the entity type each
   * gives (`''`: no type). Default: nouns `n`, `nz`, `vn` untyped, people `nr`/`nrt` `人物`, places `ns` `地点`,
   * organisations `nt` `机构`.
   */
  nounTags: Readonly<Record<string, string>>
  /** Words of the relation verbs: a verb between two entities of one clause types their relation. Default `DEFAULT_PREDICATES`. */
  predicates: readonly string[]
  /** Words that make `A <marker> B <verb>` mean `B <verb> A` (`鉴权中间件由平台组负责`). Default `由`, `被`. */
  passiveMarkers: readonly string[]
  /** Type of a relation without a verb between its ends. Default `co_occurs`. */
  cooccurrenceType: string
  /**
   * Entities this many places apart or fewer in a sentence are related; farther ones are not. Default 4, so a
   * sentence naming n entities gives at most 4n relations.
   */
  cooccurrenceWindow: number
  /** Shortest name kept, in characters (a CJK character counts one). Default 2. */
  minNameLength: number
  /** Longest name kept, in characters; also the longest marked span (heading part, emphasis, code, link) taken. Default 24. */
  maxNameLength: number
  /** Longest description kept, in characters (the defining sentence is cut there). Default 200. */
  maxDescriptionLength: number
  /**
   * Least occurrences in one document of a CJK n-gram kept whole as a term (`src/derive/ngrams.ts`); `0` takes no
   * n-grams. Default 3.
   */
  ngramMinCount: number
  /** Longest n-gram counted, in characters. Default 6. */
  ngramMaxLength: number
  /**
   * Least entropy, in bits, of the characters just left of a kept n-gram's occurrences, and of those just right of
   * them (a run's end counts as a new one each time). Default 0.9: of 3 occurrences, two different neighbours on each
   * side pass (0.92 bits), one does not (0 bits).
   */
  ngramMinNeighbourEntropy: number
  /** Words an n-gram may not start or end with (its first or last jieba word): function words. Default `DEFAULT_NGRAM_EDGE_STOPS`. */
  ngramEdgeStops: readonly string[]
  /** Words an n-gram may not hold anywhere (its jieba words): what joins two terms into a phrase. Default 的 地 得 了 着 是 和 与 或 及 之. */
  ngramInnerStops: readonly string[]
  /** Type given to Latin-script terms and marked spans that jieba does not type. Default `术语`. */
  termType: string
}

/** Generic words that name no thing of a corpus (Chinese nouns jieba tags as such, and English function words). */
const DEFAULT_STOP_WORDS: readonly string[] = [
  '问题', '情况', '方式', '时间', '时候', '部分', '内容', '过程', '结果', '方面', '要求', '原因', '目的', '作用', '范围', '工作',
  '人员', '信息', '方法', '东西', '事情', '地方', '全部', '其他', '以上', '以下', '之前', '之后', '当天', '次数', '小时', '分钟',
  '天数', '个人', '说明', '规定', '规则', '流程', '一次', '每次', '本次', '版本', '系统', '服务', '数据', '文档', '英文', '中文',
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of', 'on', 'or',
  'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with', 'we', 'you', 'our'
]

const DEFAULT_PREDICATES: readonly string[] = [
  '负责', '依赖', '禁用', '使用', '属于', '包含', '调用', '管理', '维护', '支持', '替代', '取代', '部署', '接入', '引入', '采用',
  '影响', '导致', '审核', '审批', '批准', '监控', '提供', '要求', '适用', '慎用'
]

/** Particles, prepositions, conjunctions, pronouns, adverbs, auxiliaries, numerals and measure words: no term starts or ends with one. */
const DEFAULT_NGRAM_EDGE_STOPS: readonly string[] = [
  '的', '了', '着', '过', '是', '在', '和', '与', '及', '或', '也', '就', '都', '而', '之', '但', '并', '又', '还', '则', '即', '其',
  '由', '被', '把', '将', '对', '于', '以', '从', '向', '给', '让', '为', '用', '会', '能', '要', '不', '没有', '所', '等', '个',
  '种', '这', '那', '些', '该', '此', '每', '各', '一个', '一种', '这个', '那个', '这些', '那些', '我', '你', '他', '她', '它',
  '我们', '你们', '他们', '它们', '吗', '呢', '吧', '啊', '可以', '如果', '因为', '所以', '如下', '上面', '下面', '中', '上', '下', '里',
  '一', '两', '有', '再', '才', '只', '先', '已', '很', '最', '更', '位', '号', '次', '段', '层', '条', '项', '步', '轮', '章', '节', '第',
  '时', '到', '成', '作为', '否则', '使用', '属于', '进行', '表示'
]

export const DEFAULT_DERIVATION_OPTIONS: DerivationOptions = {
  userDictionary: [],
  stopWords: DEFAULT_STOP_WORDS,
  nounTags: { n: '', nz: '', vn: '', nr: '人物', nrt: '人物', ns: '地点', nt: '机构' },
  predicates: DEFAULT_PREDICATES,
  passiveMarkers: ['由', '被'],
  cooccurrenceType: 'co_occurs',
  cooccurrenceWindow: 4,
  minNameLength: 2,
  maxNameLength: 24,
  maxDescriptionLength: 200,
  ngramMinCount: 3,
  ngramMaxLength: 6,
  ngramMinNeighbourEntropy: 0.9,
  ngramEdgeStops: DEFAULT_NGRAM_EDGE_STOPS,
  ngramInnerStops: ['的', '地', '得', '了', '着', '是', '和', '与', '或', '及', '之'],
  termType: '术语'
}

/** The defaults with `overrides` applied. */
export function derivationOptions(overrides: Partial<DerivationOptions> = {}): DerivationOptions {
  return { ...DEFAULT_DERIVATION_OPTIONS, ...overrides }
}
