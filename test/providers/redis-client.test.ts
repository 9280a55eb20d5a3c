import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { clusterAddress, sentinelAddress } from '../../src/providers/redis-client.js'

describe('a Redis Cluster address in REDIS_URL', () => {
  it.each([
    ['redis+cluster://10.0.0.1:7000,10.0.0.2:7001', { nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }], tls: false }],
    ['redis+cluster://redis-a', { nodes: [{ host: 'redis-a', port: 6379 }], tls: false }],
    ['rediss+cluster://app:s%40cret@r1:6380,[::1]:6381/', {
      nodes: [{ host: 'r1', port: 6380 }, { host: '::1', port: 6381 }], tls: true, username: 'app', password: 's@cret'
    }],
    ['redis+cluster://:pw@r1:7000', { nodes: [{ host: 'r1', port: 7000 }], tls: false, password: 'pw' }]
  ])('%s names its seed nodes', (url, expected) => {
    expect(clusterAddress(url)).toEqual(expected)
  })

  it('a single server\'s URL is no cluster', () => {
    expect(clusterAddress('redis://127.0.0.1:6379')).toBeUndefined()
    expect(clusterAddress('rediss://user:pw@host:6380/2')).toBeUndefined()
  })

  it.each(['redis+cluster://', 'redis+cluster://a:1,,b:2', 'redis+cluster://a:x', 'redis+cluster://a:1/0'])('%s is refused, naming it', (url) => {
    expect(() => clusterAddress(url)).toThrow(url)
    expect(() => loadConfig({ REDIS_URL: url })).toThrow(ConfigError)
  })

  it('the configuration takes a cluster URL as REDIS_URL', () => {
    expect(loadConfig({ REDIS_URL: 'redis+cluster://r1:7000,r2:7000' }).cache.redisUrl).toBe('redis+cluster://r1:7000,r2:7000')
  })
})

describe('a Sentinel address in REDIS_URL', () => {
  it.each([
    ['redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/mymaster', {
      nodes: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26380 }], tls: false, name: 'mymaster'
    }],
    ['redis+sentinel://s1/recall', { nodes: [{ host: 's1', port: 6379 }], tls: false, name: 'recall' }],
    ['rediss+sentinel://app:s%40cret@s1:26379,[::1]:26380/my%20master', {
      nodes: [{ host: 's1', port: 26379 }, { host: '::1', port: 26380 }], tls: true, username: 'app', password: 's@cret', name: 'my master'
    }]
  ])('%s names its Sentinels and master', (url, expected) => {
    expect(sentinelAddress(url)).toEqual(expected)
    expect(clusterAddress(url)).toBeUndefined()
  })

  it('neither a single server\'s nor a cluster\'s URL is a Sentinel address', () => {
    expect(sentinelAddress('redis://127.0.0.1:6379')).toBeUndefined()
    expect(sentinelAddress('redis+cluster://r1:7000')).toBeUndefined()
  })

  it.each(['redis+sentinel://s1:26379', 'redis+sentinel://s1:26379/', 'redis+sentinel://s1:x/m', 'redis+sentinel://s1:1,,s2:2/m', 'redis+sentinel://s1:1/m/0'])(
    '%s is refused, naming it', (url) => {
      expect(() => sentinelAddress(url)).toThrow(url)
      expect(() => loadConfig({ REDIS_URL: url })).toThrow(ConfigError)
    })
})

describe('REDIS_WAIT_REPLICAS', () => {
  it.each([
    ['redis://r1:6379', 0], ['rediss://r1:6379', 0],
    ['redis+cluster://r1:7000', 1], ['rediss+cluster://r1:7000', 1], ['redis+sentinel://s1:26379/m', 1]
  ] as const)('unset, %s asks %i replica(s) to confirm, for 1,000 ms', (url, replicas) => {
    expect(loadConfig({ REDIS_URL: url }).cache.redisWait).toEqual({ replicas, timeoutMs: 1000 })
  })

  it('set, it is taken as given (0 turns WAIT off on a cluster without replicas)', () => {
    expect(loadConfig({ REDIS_URL: 'redis+cluster://r1:7000', REDIS_WAIT_REPLICAS: '0' }).cache.redisWait.replicas).toBe(0)
    expect(loadConfig({ REDIS_URL: 'redis://r1:6379', REDIS_WAIT_REPLICAS: '2', REDIS_WAIT_TIMEOUT_MS: '250' }).cache.redisWait).toEqual({ replicas: 2, timeoutMs: 250 })
    expect(() => loadConfig({ REDIS_WAIT_REPLICAS: '-1' })).toThrow(ConfigError)
  })
})
