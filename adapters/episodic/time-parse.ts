/**
 * Query time parsing (m-flow `parse_query_time`), with difference 3 (docs/episodic.md): 大前天, 大后天,
 * 大前年 and 大后年 mean -3/+3 and are matched before the shorter words they contain.
 *
 * Calendar boundaries follow the local date at `tz_offset_hours` (UTC+8 upstream) but are emitted as
 * UTC-midnight timestamps, as upstream does.
 */
import type { QueryTime } from './types.js'

const DAY_MS = 86_400_000

interface Span {
  start: number
  end: number
}

interface Found {
  span: Span
  text: string
  start_ms: number
  end_ms: number
  confidence: number
}

/** Python's `\d` is any Unicode decimal digit; this reads one such run as an integer. */
function parseDigits(s: string): number {
  let value = 0
  for (const ch of s) {
    const folded = ch.normalize('NFKC')
    let d = /^[0-9]$/.test(folded) ? folded.charCodeAt(0) - 48 : -1
    if (d < 0) {
      // Unicode decimal digits come in contiguous blocks of ten starting at a code point for zero.
      const cp = ch.codePointAt(0)!
      for (let k = 0; k <= 9; k++) {
        const zero = String.fromCodePoint(cp - k)
        if (!/\p{Nd}/u.test(zero)) break
        d = k
      }
    }
    value = value * 10 + Math.max(0, d)
  }
  return value
}

function utcDay(year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day)
}

function addMonths(year: number, month: number, delta: number): { year: number; month: number } {
  const index = year * 12 + (month - 1) + delta
  return { year: Math.floor(index / 12), month: (index % 12 + 12) % 12 + 1 }
}

function monthRange(year: number, month: number): [number, number] {
  const next = addMonths(year, month, 1)
  return [utcDay(year, month, 1), utcDay(next.year, next.month, 1)]
}

function mondayOf(dayMs: number): number {
  const weekday = (new Date(dayMs).getUTCDay() + 6) % 7 // Monday 0 … Sunday 6, as Python's weekday()
  return dayMs - weekday * DAY_MS
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1 || day > 31) return false
  const d = new Date(utcDay(year, month, day))
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day
}

const CN_RELATIVE_DAYS: ReadonlyArray<[string, number]> = [
  // Difference 3: the 大 words first, so they beat 前天/后天 (upstream resolves them to ±2).
  ['大前天', -3], ['大后天', 3],
  ['昨天晚上', -1], ['今天早上', 0], ['今天晚上', 0], ['今天下午', 0], ['今天上午', 0], ['前天晚上', -2],
  ['明天早上', 1], ['明天晚上', 1], ['一大早', 0],
  ['昨天', -1], ['昨日', -1], ['今天', 0], ['今日', 0], ['明天', 1], ['明日', 1], ['前天', -2], ['后天', 2],
  ['今儿', 0], ['明儿', 1], ['昨儿', -1], ['后儿', 2], ['前儿', -2],
  ['昨晚', -1], ['今晚', 0], ['明早', 1], ['今早', 0], ['昨早', -1], ['一早', 0]
]

function cnWeekdayKeys(): Array<[string, number, number]> {
  const table: Array<[string, number, string]> = [
    ['上周', -1, '一二三四五六日天'], ['上礼拜', -1, '一二三四五六天'], ['上星期', -1, '一二三四五六天'],
    ['这周', 0, '一二三四五六日天'], ['本周', 0, '一二三四五六日'], ['这礼拜', 0, '一二三四五六天'],
    ['这星期', 0, '一二三四五六天'],
    ['下周', 1, '一二三四五六日天'], ['下礼拜', 1, '一二三四五六天'], ['下星期', 1, '一二三四五六天']
  ]
  const keys: Array<[string, number, number]> = []
  for (const [prefix, week, days] of table) {
    for (const d of days) keys.push([prefix + d, week, '一二三四五六'.indexOf(d) >= 0 ? '一二三四五六'.indexOf(d) : 6])
  }
  return keys
}
const CN_WEEKDAYS = cnWeekdayKeys()

const CN_RELATIVE_WEEKS: ReadonlyArray<[string, number]> = [
  ['上上一周', -2], ['上上周', -2], ['下下一周', 2], ['下下周', 2], ['上上礼拜', -2], ['上上星期', -2], ['下下礼拜', 2],
  ['下下星期', 2], ['上一周', -1], ['上周', -1], ['下一周', 1], ['下周', 1], ['这周', 0], ['本周', 0],
  ['上礼拜', -1], ['这礼拜', 0], ['下礼拜', 1], ['上星期', -1], ['这星期', 0], ['下星期', 1],
  ['这周末', 0], ['上周末', -1], ['下周末', 1], ['这个周末', 0], ['上个周末', -1], ['下个周末', 1]
]

const CN_RELATIVE_MONTHS: ReadonlyArray<[string, number]> = [
  ['上上个月', -2], ['上上月', -2], ['下下个月', 2], ['下下月', 2], ['上个月', -1], ['上月', -1], ['这个月', 0],
  ['本月', 0], ['下个月', 1], ['下月', 1]
]

const CN_RELATIVE_YEARS: ReadonlyArray<[string, number]> = [
  // Difference 3 again: 大前年/大后年 before 前年/后年.
  ['大前年', -3], ['大后年', 3],
  ['去年', -1], ['前年', -2], ['今年', 0], ['明年', 1], ['后年', 2]
]

const CN_FUZZY: ReadonlyArray<[string, number, number]> = [
  ['一个半月前', 45, 0.6], ['大半年前', 200, 0.4], ['半个月前', 15, 0.6], ['十来天前', 12, 0.5], ['好几天前', 6, 0.5],
  ['前些日子', 14, 0.5], ['这段时间', 14, 0.4], ['早些时候', 3, 0.5],
  ['头两天', 3, 0.6], ['这两天', 3, 0.7], ['前两天', 3, 0.7], ['过两天', 3, 0.6], ['头几天', 5, 0.6], ['前些天', 7, 0.6],
  ['这些天', 7, 0.5],
  ['这阵子', 14, 0.5], ['这会儿', 1, 0.6], ['眼下', 3, 0.5], ['眼前', 3, 0.5],
  ['现在', 1, 0.7], ['此刻', 1, 0.7], ['当下', 1, 0.6], ['目前', 3, 0.5], ['如今', 7, 0.4], ['当前', 3, 0.5], ['即刻', 1, 0.6],
  ['马上', 1, 0.5], ['立刻', 1, 0.6], ['立即', 1, 0.6], ['顷刻', 1, 0.5], ['即时', 1, 0.6],
  ['最近', 7, 0.5], ['近期', 14, 0.5], ['近来', 14, 0.4], ['近几天', 5, 0.6], ['这几天', 5, 0.6], ['刚才', 1, 0.6],
  ['刚刚', 1, 0.6], ['方才', 1, 0.5], ['不久前', 14, 0.5], ['前阵子', 30, 0.4]
]

const EN_RELATIVE_DAYS: ReadonlyArray<[string, number]> = [
  ['the day before yesterday', -2], ['day before yesterday', -2], ['the day after tomorrow', 2], ['day after tomorrow', 2],
  ['this morning', 0], ['this afternoon', 0], ['this evening', 0], ['tonight', 0], ['last night', -1],
  ['tomorrow morning', 1], ['tomorrow night', 1],
  ['yesterday morning', -1], ['yesterday afternoon', -1], ['yesterday evening', -1], ['yesterday', -1], ['today', 0],
  ['tomorrow', 1]
]

const EN_DAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']
const EN_WEEKDAYS: ReadonlyArray<[string, number, number]> = (
  [['last', -1], ['this', 0], ['next', 1]] as const
).flatMap(([ref, week]) => EN_DAY_NAMES.map((d, i): [string, number, number] => [`${ref} ${d}`, week, i]))

const EN_RELATIVE_WEEKS: ReadonlyArray<[string, number]> = [
  ['the week before last', -2], ['week before last', -2], ['a couple of weeks ago', -2], ['a few weeks back', -2],
  ['a few weeks ago', -2], ['two weeks ago', -2],
  ['over the weekend', 0], ['this weekend', 0], ['last weekend', -1], ['next weekend', 1],
  ['last week', -1], ['this week', 0], ['next week', 1]
]

const EN_RELATIVE_MONTHS: ReadonlyArray<[string, number]> = [
  ['last month', -1], ['this month', 0], ['next month', 1], ['the month before last', -2], ['month before last', -2],
  ['two months ago', -2]
]

const EN_RELATIVE_YEARS: ReadonlyArray<[string, number]> = [
  ['last year', -1], ['this year', 0], ['next year', 1], ['the year before last', -2], ['year before last', -2],
  ['two years ago', -2]
]

const EN_FUZZY: ReadonlyArray<[string, number, number]> = [
  ['as recently as last week', 7, 0.7], ['over the past few months', 90, 0.4], ['in the last few months', 90, 0.4],
  ['over the past few weeks', 21, 0.5], ['in the last few weeks', 21, 0.5],
  ['around two weeks ago', 14, 0.6], ['about two weeks ago', 14, 0.6], ['roughly a week ago', 7, 0.6],
  ['around a week ago', 7, 0.6], ['about a week ago', 7, 0.6], ['half a month ago', 15, 0.6],
  ['for the past few days', 5, 0.6], ['in the last few days', 5, 0.6], ['over the last few days', 5, 0.6],
  ['over the past year', 365, 0.4], ['over the past month', 30, 0.5], ['over the past week', 7, 0.6],
  ['in the past year', 365, 0.4], ['in the past month', 30, 0.5], ['in the past week', 7, 0.6],
  ['a couple of days ago', 3, 0.7], ['just last week', 7, 0.7], ['only yesterday', 1, 0.8], ['just yesterday', 1, 0.8],
  ['a few days back', 5, 0.6], ['a few days ago', 5, 0.6], ['the past few days', 5, 0.6], ['past few days', 5, 0.6],
  ['these days', 7, 0.5], ['nowadays', 14, 0.4], ['at the moment', 1, 0.6], ['at present', 3, 0.5], ['as of now', 1, 0.6],
  ['as of today', 1, 0.7], ['right now', 1, 0.7], ['the other day', 7, 0.5], ['not long ago', 14, 0.5],
  ['a while ago', 30, 0.4], ['a while back', 30, 0.4], ['earlier today', 1, 0.7], ['earlier on', 3, 0.5],
  ['recently', 7, 0.5], ['presently', 1, 0.5], ['just now', 1, 0.6], ['lately', 14, 0.4], ['currently', 1, 0.5],
  ['immediately', 1, 0.5], ['shortly', 3, 0.4], ['soon', 7, 0.3]
]

const CN_QUARTERS: ReadonlyArray<[string, number]> = [
  ['上季度', -1], ['上个季度', -1], ['本季度', 0], ['这个季度', 0], ['下季度', 1], ['下个季度', 1]
]
const EN_QUARTERS: ReadonlyArray<[string, number]> = [
  ['last quarter', -1], ['this quarter', 0], ['next quarter', 1], ['previous quarter', -1]
]

const CN_YEAR_PERIODS: ReadonlyArray<[string, number, number, number]> = [
  ['年初', 1, 2, 0.6], ['年中', 5, 7, 0.5], ['年末', 11, 12, 0.6], ['年底', 11, 12, 0.6], ['上半年', 1, 6, 0.7],
  ['下半年', 7, 12, 0.7], ['开年', 1, 2, 0.6], ['岁末', 11, 12, 0.5], ['年关', 12, 12, 0.6], ['年头', 1, 2, 0.5],
  ['年尾', 11, 12, 0.5]
]
const CN_MONTH_PERIODS: ReadonlyArray<[string, number, number, number]> = [
  ['月初', 1, 10, 0.6], ['月中', 10, 20, 0.5], ['月底', 20, 31, 0.6], ['月末', 25, 31, 0.6], ['月头', 1, 10, 0.5],
  ['月尾', 20, 31, 0.5]
]

const D = '\\p{Nd}'
const MONTH_NAMES: Record<string, number> = {
  January: 1, February: 2, March: 3, April: 4, May: 5, June: 6, July: 7, August: 8, September: 9, October: 10,
  November: 11, December: 12, Jan: 1, Feb: 2, Mar: 3, Apr: 4, Jun: 6, Jul: 7, Aug: 8, Sep: 9, Sept: 9, Oct: 10,
  Nov: 11, Dec: 12
}
const MONTH_ALTERNATION = Object.keys(MONTH_NAMES).sort((a, b) => b.length - a.length).join('|')

const REGEX_CACHE = new Map<string, RegExp>()
/** The parser's patterns are constant: compile each once. */
function compiled(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`
  let re = REGEX_CACHE.get(key)
  if (!re) {
    re = new RegExp(source, flags)
    REGEX_CACHE.set(key, re)
  }
  return re
}

/** Lowercases character by character, keeping every index where it was (spans index both strings). */
function lowerSameLength(s: string): string {
  let out = ''
  for (const ch of s) {
    const low = ch.toLowerCase()
    out += low.length === ch.length ? low : ch
  }
  return out
}

/**
 * Parses the time expressions of a query.
 *
 * @param query the raw query
 * @param nowMs the clock, epoch ms (tests pin it)
 * @param tzOffsetHours the offset whose calendar the words refer to (8 upstream)
 */
export function parseQueryTime(query: string, nowMs: number, tzOffsetHours = 8): QueryTime {
  const local = new Date(nowMs + tzOffsetHours * 3_600_000)
  const year = local.getUTCFullYear()
  const month = local.getUTCMonth() + 1
  const today = utcDay(year, month, local.getUTCDate())
  const lower = lowerSameLength(query)
  const found: Found[] = []

  const overlaps = (span: Span): boolean => found.some((f) => span.start < f.span.end && f.span.start < span.end)
  const record = (span: Span, range: [number, number] | null, confidence: number): void => {
    if (range === null || overlaps(span)) return
    found.push({ span, text: query.slice(span.start, span.end), start_ms: range[0], end_ms: range[1], confidence })
  }
  const eachMatch = (source: string, flags: string, text: string, fn: (m: RegExpExecArray, span: Span) => void): void => {
    const re = compiled(source, `g${flags}u`)
    re.lastIndex = 0
    for (const m of text.matchAll(re)) {
      const start = m.index ?? 0
      fn(m as RegExpExecArray, { start, end: start + m[0].length })
    }
  }
  const oneDay = (y: number, m: number, d: number): [number, number] | null =>
    validDate(y, m, d) ? [utcDay(y, m, d), utcDay(y, m, d) + DAY_MS] : null
  const dayAt = (offset: number): [number, number] => [today + offset * DAY_MS, today + (offset + 1) * DAY_MS]
  const weekAt = (offset: number): [number, number] => {
    const monday = mondayOf(today) + offset * 7 * DAY_MS
    return [monday, monday + 7 * DAY_MS]
  }
  const weekdayAt = (week: number, weekday: number): [number, number] => {
    const day = mondayOf(today) + (week * 7 + weekday) * DAY_MS
    return [day, day + DAY_MS]
  }
  const monthAt = (offset: number): [number, number] => {
    const target = addMonths(year, month, offset)
    return monthRange(target.year, target.month)
  }
  const yearRange = (y: number): [number, number] => [utcDay(y, 1, 1), utcDay(y + 1, 1, 1)]
  const quarterRange = (y: number, q: number): [number, number] => {
    const first = addMonths(y, 1, (q - 1) * 3)
    const after = addMonths(first.year, first.month, 3)
    return [utcDay(first.year, first.month, 1), utcDay(after.year, after.month, 1)]
  }
  const words = <T extends unknown[]>(text: string, list: ReadonlyArray<[string, ...T]>, fn: (...rest: T) => [[number, number], number]): void => {
    for (const [word, ...rest] of list) {
      const at = text.indexOf(word)
      if (at < 0) continue
      const [range, conf] = fn(...(rest as T))
      record({ start: at, end: at + word.length }, range, conf)
    }
  }

  // 1. Explicit dates, one day.
  eachMatch(`(${D}{4})年(${D}{1,2})月(${D}{1,2})[日号]?`, '', query, (m, s) =>
    record(s, oneDay(parseDigits(m[1]!), parseDigits(m[2]!), parseDigits(m[3]!)), 0.95))
  eachMatch(`(${D}{4})[-/.](${D}{1,2})[-/.](${D}{1,2})`, '', query, (m, s) =>
    record(s, oneDay(parseDigits(m[1]!), parseDigits(m[2]!), parseDigits(m[3]!)), 0.95))
  eachMatch(`(${D}{1,2})月(${D}{1,2})[日号]`, '', query, (m, s) =>
    record(s, oneDay(year, parseDigits(m[1]!), parseDigits(m[2]!)), 0.95))
  // English month-day-year and day-month-year are tried upstream but their parser returns nothing.

  // 2. Explicit months.
  const oneMonth = (y: number, m: number): [number, number] | null => (m >= 1 && m <= 12 ? monthRange(y, m) : null)
  eachMatch(`(${D}{4})年(${D}{1,2})月`, '', query, (m, s) => record(s, oneMonth(parseDigits(m[1]!), parseDigits(m[2]!)), 0.9))
  eachMatch(`(${D}{4})[-/](${D}{1,2})(?![-/\\p{Nd}])`, '', query, (m, s) =>
    record(s, oneMonth(parseDigits(m[1]!), parseDigits(m[2]!)), 0.9))
  // Month names are case-sensitive upstream: "may 2023" is not parsed.
  eachMatch(`(${MONTH_ALTERNATION})\\s+(${D}{4})`, '', query, (m, s) =>
    record(s, oneMonth(parseDigits(m[2]!), MONTH_NAMES[m[1]!] ?? 0), 0.9))

  // 3. Explicit year (before the quarter regexes, so 2024年第一季度 is the whole year).
  eachMatch(`(${D}{4})年(?!\\p{Nd})`, '', query, (m, s) => record(s, yearRange(parseDigits(m[1]!)), 0.85))

  // 4. Chinese word lists, each word by its first occurrence.
  words(query, CN_RELATIVE_DAYS, (off) => [dayAt(off), 0.9])
  words(query, CN_WEEKDAYS, (week, weekday) => [weekdayAt(week, weekday), 0.9])
  words(query, CN_RELATIVE_WEEKS, (off) => [weekAt(off), 0.85])
  words(query, CN_RELATIVE_MONTHS, (off) => [monthAt(off), 0.8])
  words(query, CN_RELATIVE_YEARS, (off) => [yearRange(year + off), 0.75])
  words(query, CN_FUZZY, (days, conf) => [[today - days * DAY_MS, today + DAY_MS], conf])

  // 5. English word lists on the lowercased query, plain substrings (no word boundaries).
  words(lower, EN_RELATIVE_DAYS, (off) => [dayAt(off), 0.9])
  words(lower, EN_WEEKDAYS, (week, weekday) => [weekdayAt(week, weekday), 0.9])
  words(lower, EN_RELATIVE_WEEKS, (off) => [weekAt(off), 0.85])
  words(lower, EN_RELATIVE_MONTHS, (off) => [monthAt(off), 0.8])
  words(lower, EN_RELATIVE_YEARS, (off) => [yearRange(year + off), 0.75])
  words(lower, EN_FUZZY, (days, conf) => [[today - days * DAY_MS, today + DAY_MS], conf])

  // 6. Relative quarters.
  const quarterAt = (off: number): [number, number] => {
    const index = year * 4 + Math.floor((month - 1) / 3) + off
    return quarterRange(Math.floor(index / 4), (index % 4) + 1)
  }
  words(query, CN_QUARTERS, (off) => [quarterAt(off), 0.8])
  words(lower, EN_QUARTERS, (off) => [quarterAt(off), 0.8])

  // 7. "N ago".
  const ago = (unit: 'd' | 'w' | 'm' | 'y', n: number): [[number, number], number] | null => {
    if (n > 100) return null
    if (unit === 'd') return [dayAt(-n), n <= 7 ? 0.85 : 0.7]
    if (unit === 'w') {
      const monday = mondayOf(today - n * 7 * DAY_MS)
      return [[monday, monday + 7 * DAY_MS], 0.75]
    }
    if (unit === 'm') return [[today - (30 * n + 15) * DAY_MS, today - (30 * n - 15) * DAY_MS], 0.65]
    return [yearRange(year - n), 0.6]
  }
  const agoPatterns: Array<[string, string, 'd' | 'w' | 'm' | 'y']> = [
    [lower, `(${D}+)\\s*days?\\s+ago`, 'd'], [lower, `(${D}+)\\s*weeks?\\s+ago`, 'w'],
    [lower, `(${D}+)\\s*months?\\s+ago`, 'm'], [lower, `(${D}+)\\s*years?\\s+ago`, 'y'],
    [query, `(${D}+)天前`, 'd'], [query, `(${D}+)周前`, 'w'], [query, `(${D}+)个?月前`, 'm'], [query, `(${D}+)年前`, 'y']
  ]
  for (const [text, source, unit] of agoPatterns) {
    eachMatch(source, '', text, (m, s) => {
      const parsed = ago(unit, parseDigits(m[1]!))
      if (parsed) record(s, parsed[0], parsed[1])
    })
  }

  // 8. and 9. Periods of the current year and month.
  words(query, CN_YEAR_PERIODS, (from, to, conf) => {
    const after = addMonths(year, to, 1)
    return [[utcDay(year, from, 1), utcDay(after.year, after.month, 1)], conf]
  })
  const monthLength = (monthRange(year, month)[1] - monthRange(year, month)[0]) / DAY_MS
  words(query, CN_MONTH_PERIODS, (from, to, conf) => [
    [utcDay(year, month, from), utcDay(year, month, Math.min(to, monthLength)) + DAY_MS], conf
  ])

  // 10. Quarter regexes.
  const quarterDigit = (q: string): number => ('一二三四'.indexOf(q) >= 0 ? '一二三四'.indexOf(q) + 1 : parseDigits(q))
  eachMatch(`[Qq]([1-4])\\s*(${D}{4})`, '', query, (m, s) => record(s, quarterRange(parseDigits(m[2]!), parseDigits(m[1]!)), 0.9))
  eachMatch(`(${D}{4})\\s*[Qq]([1-4])`, '', query, (m, s) => record(s, quarterRange(parseDigits(m[1]!), parseDigits(m[2]!)), 0.9))
  eachMatch(`(${D}{4})年第?([一二三四1-4])季度?`, '', query, (m, s) =>
    record(s, quarterRange(parseDigits(m[1]!), quarterDigit(m[2]!)), 0.9))

  return mergeFound(query, found)
}

function mergeFound(query: string, found: Found[]): QueryTime {
  if (found.length === 0) {
    return { has_time: false, start_ms: null, end_ms: null, confidence: 0, duration_days: 0, query_wo_time: query, matches: [] }
  }
  const start = Math.min(...found.map((f) => f.start_ms))
  const end = Math.max(...found.map((f) => f.end_ms))
  const confidence = Math.max(...found.map((f) => f.confidence))
  const cut = new Array<boolean>(query.length).fill(false)
  for (const f of found) for (let i = f.span.start; i < f.span.end; i++) cut[i] = true
  let rest = ''
  for (let i = 0; i < query.length; i++) if (!cut[i]) rest += query[i]
  const stripped = rest.replace(/\s+/gu, ' ').trim()
  return {
    has_time: confidence > 0,
    start_ms: start,
    end_ms: end,
    confidence,
    duration_days: (end - start) / DAY_MS,
    query_wo_time: stripped === '' ? query : stripped,
    matches: found.map((f) => ({ text: f.text, start_ms: f.start_ms, end_ms: f.end_ms, confidence: f.confidence }))
  }
}
