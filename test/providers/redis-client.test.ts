import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { clusterAddress } from '../../src/providers/redis-client.js'

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
