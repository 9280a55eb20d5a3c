import { describe, expect, it } from 'vitest'
import { crc32OffThread } from '../../../src/providers/embedded/checksum-thread.js'

describe('crc32OffThread', () => {
  // CRC-32's published check value: the CRC of the ASCII digits 1 to 9 is 0xCBF43926
  it('answers the CRC-32 of bytes in a SharedArrayBuffer (on its thread) and of any other bytes (here)', async () => {
    const shared = Buffer.from(new SharedArrayBuffer(13))
    shared.write('xx123456789yy', 'latin1')
    const plain = Buffer.from('123456789', 'latin1')
    const answers = await Promise.all([crc32OffThread(shared.subarray(2, 11)), crc32OffThread(plain), crc32OffThread(shared.subarray(2, 11))])
    expect(answers).toEqual([0xcbf43926, 0xcbf43926, 0xcbf43926])
  })
})
