/**
 * The times chat exports carry, read as epoch milliseconds: ISO 8601 (`2023-05-08T13:56:00Z`, `2023-05-08 13:56`,
 * `2023-05-08`), LoCoMo's `1:56 pm on 8 May, 2023`, `May 8, 2023 1:56 PM`, `8 May 2023`, `2023/05/08 13:56`,
 * `2023年5月8日 下午1:56`, `2023年5月8日 13点56分`. A time without an offset is read as UTC (an export rarely says
 * its zone; reading it so keeps the calendar day it names). Anything else is undefined: the caller refuses it.
 */

const MONTHS: Readonly<Record<string, number>> = Object.fromEntries([
  ['january', 'jan'], ['february', 'feb'], ['march', 'mar'], ['april', 'apr'], ['may', 'may'], ['june', 'jun'],
  ['july', 'jul'], ['august', 'aug'], ['september', 'sep'], ['october', 'oct'], ['november', 'nov'], ['december', 'dec']
].flatMap(([full, short], i) => [[full!, i + 1], [short!, i + 1], ...(short === 'sep' ? [['sept', 9] as const] : [])]))

const MONTH = String.raw`(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`
const ORDINAL = String.raw`(\d{1,2})(?:st|nd|rd|th)?`

/** Full ISO 8601 with a `T` or a space, seconds and fractions optional, `Z` or an offset optional. */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i

interface DatePart { year: number; month: number; day: number }
interface TimePart { hour: number; minute: number; second: number }

const DATE_FORMS: ReadonlyArray<{ re: RegExp; read: (m: RegExpExecArray) => DatePart }> = [
  { re: /(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?/u, read: (m) => ({ year: +m[1]!, month: +m[2]!, day: +m[3]! }) },
  { re: new RegExp(String.raw`${ORDINAL}\s+(?:of\s+)?${MONTH},?\s+(\d{4})`, 'iu'), read: (m) => ({ year: +m[3]!, month: MONTHS[m[2]!.toLowerCase()]!, day: +m[1]! }) },
  { re: new RegExp(String.raw`${MONTH}\s+${ORDINAL},?\s+(\d{4})`, 'iu'), read: (m) => ({ year: +m[3]!, month: MONTHS[m[1]!.toLowerCase()]!, day: +m[2]! }) }
]

const PERIODS: Readonly<Record<string, 'am' | 'pm' | 'noon'>> = {
  上午: 'am', 早上: 'am', 早晨: 'am', 凌晨: 'am', 中午: 'noon', 下午: 'pm', 晚上: 'pm', 傍晚: 'pm', 夜里: 'pm', 夜间: 'pm'
}

const TIME_FORMS: ReadonlyArray<RegExp> = [
  /(上午|早上|早晨|凌晨|中午|下午|晚上|傍晚|夜里|夜间)?\s*(\d{1,2})\s*[:：点时](?:\s*(\d{2})\s*分?)?(?:\s*[:：]\s*(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?/iu,
  /(\d{1,2})\s*(a\.?m\.?|p\.?m\.?)/iu
]

/** What may stand between and around the date and the time: `on`, `at`, commas, a `T`, spaces. */
const FILLER = /^(?:\s|,|，|on|at|t)*$/iu

export function parseChatTime(text: string): number | undefined {
  const s = text.trim()
  if (s === '' || s.length > 64) return undefined
  const iso = ISO.exec(s)
  if (iso) return isoMs(iso)
  let rest = s
  let date: DatePart | undefined
  for (const form of DATE_FORMS) {
    const m = form.re.exec(rest)
    if (!m) continue
    date = form.read(m)
    rest = rest.slice(0, m.index) + ' ' + rest.slice(m.index + m[0].length)
    break
  }
  if (!date) return undefined
  let time: TimePart = { hour: 0, minute: 0, second: 0 }
  if (!FILLER.test(rest)) {
    const found = timeOf(rest)
    if (!found) return undefined
    time = found.time
    rest = rest.slice(0, found.at) + ' ' + rest.slice(found.at + found.length)
    if (!FILLER.test(rest)) return undefined
  }
  return utcMs(date, time)
}

function timeOf(text: string): { time: TimePart; at: number; length: number } | undefined {
  const [colon, bare] = TIME_FORMS
  const m = colon!.exec(text)
  if (m) {
    const period = m[1] ? PERIODS[m[1]] : m[5] ? (m[5].toLowerCase().startsWith('a') ? 'am' : 'pm') : undefined
    const hour = withPeriod(+m[2]!, period)
    return hour === undefined ? undefined : { time: { hour, minute: m[3] ? +m[3] : 0, second: m[4] ? +m[4] : 0 }, at: m.index, length: m[0].length }
  }
  const b = bare!.exec(text)
  if (!b) return undefined
  const hour = withPeriod(+b[1]!, b[2]!.toLowerCase().startsWith('a') ? 'am' : 'pm')
  return hour === undefined ? undefined : { time: { hour, minute: 0, second: 0 }, at: b.index, length: b[0].length }
}

/** A 12-hour clock's hour with its period, a 24-hour one as it is; undefined when they do not fit together. */
function withPeriod(hour: number, period: 'am' | 'pm' | 'noon' | undefined): number | undefined {
  if (period === undefined) return hour <= 23 ? hour : undefined
  // `13:10 pm` contradicts itself: refused rather than guessed
  if (hour > 12) return undefined
  if (period === 'am') return hour % 12
  if (period === 'noon') return hour === 12 || hour < 6 ? (hour % 12) + 12 : hour
  return (hour % 12) + 12
}

function utcMs(date: DatePart, time: TimePart): number | undefined {
  const { year, month, day } = date
  const { hour, minute, second } = time
  if (month < 1 || month > 12 || day < 1 || minute > 59 || second > 59 || hour > 23) return undefined
  const ms = Date.UTC(year, month - 1, day, hour, minute, second)
  // 31 February rolls into March: refuse it
  return new Date(ms).getUTCDate() === day ? ms : undefined
}

function isoMs(m: RegExpExecArray): number | undefined {
  const base = utcMs({ year: +m[1]!, month: +m[2]!, day: +m[3]! }, { hour: m[4] ? +m[4] : 0, minute: m[5] ? +m[5] : 0, second: m[6] ? +m[6] : 0 })
  if (base === undefined) return undefined
  const fraction = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0
  const zone = m[8]
  if (!zone || zone.toUpperCase() === 'Z') return base + fraction
  const sign = zone.startsWith('-') ? -1 : 1
  const digits = zone.slice(1).replace(':', '')
  const offset = (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000
  return base + fraction - sign * offset
}
