/** The chat export times `POST /ingest/conversations` reads (docs/conversations.md); expected instants from the calendar. */
import { describe, expect, it } from 'vitest'
import { parseChatTime } from '../../src/derive/conversation/chat-time.js'

const at = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) => Date.UTC(y, mo - 1, d, h, mi, s)

describe('parseChatTime', () => {
  it.each([
    ['2023-05-08T13:56:00Z', at(2023, 5, 8, 13, 56)],
    ['2023-05-08T13:56:00.250Z', at(2023, 5, 8, 13, 56) + 250],
    ['2023-05-08T21:56:00+08:00', at(2023, 5, 8, 13, 56)],
    ['2023-05-08T08:56-0500', at(2023, 5, 8, 13, 56)],
    ['2023-05-08 13:56', at(2023, 5, 8, 13, 56)],
    ['2023-05-08', at(2023, 5, 8)],
    ['1:56 pm on 8 May, 2023', at(2023, 5, 8, 13, 56)],
    ['12:09 am on 13 September, 2023', at(2023, 9, 13, 0, 9)],
    ['10:37 am on 27 June, 2023', at(2023, 6, 27, 10, 37)],
    ['May 8, 2023 1:56 PM', at(2023, 5, 8, 13, 56)],
    ['8 May 2023', at(2023, 5, 8)],
    ['Sept 3rd, 2023', at(2023, 9, 3)],
    ['2023/05/08 13:56', at(2023, 5, 8, 13, 56)],
    ['2023年5月8日 下午1:56', at(2023, 5, 8, 13, 56)],
    ['2023年5月8日 上午9点30分', at(2023, 5, 8, 9, 30)],
    ['2023年5月8日 晚上8点', at(2023, 5, 8, 20)],
    ['2023年5月8日 中午12:10', at(2023, 5, 8, 12, 10)],
    ['2023年5月8日', at(2023, 5, 8)]
  ])('%s', (text, expected) => {
    expect(parseChatTime(text)).toBe(expected)
  })

  it.each(['', 'yesterday', 'sometime in May', '2023-02-30', '2023-13-01', '1:56 pm', '25:00 on 8 May, 2023', '13:10 pm on 8 May, 2023', '8 May, 2023 and then some'])(
    'refuses %j', (text) => {
      expect(parseChatTime(text)).toBeUndefined()
    })
})
