import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { PRESENCE_DEFAULTS, resolvePresenceOptions } from '../src/options.js';
import { PresenceNotRunningError, RedisPresence } from '../src/redis-presence.js';
import type { RedisClient } from '../src/types.js';

// RedisPresence's checks, without Redis traffic. Its behaviour runs on a real redis-server and
// a Redis Cluster in test/integration (presence.test.ts, presence-processes.test.ts, cluster-presence.test.ts);
// its scripts on ioredis-mock in presence-scripts.test.ts.

const redis = new RedisMock() as unknown as RedisClient;

describe('RedisPresence', () => {
  describe('constructor', () => {
    it.each([
      [{ redis: undefined }, TypeError, /redis must be an ioredis client or Cluster, got undefined/],
      [{ namespace: 'a{b}' }, TypeError, /namespace must be a non-empty string without/],
      [{ graceMs: -1 }, RangeError, /^@tickwheel\/redis: graceMs must be a finite number of ms >= 0, got -1$/],
      [{ graceMs: Infinity }, RangeError, /graceMs/],
      [{ nodeTtlMs: 299 }, RangeError, /^@tickwheel\/redis: nodeTtlMs must be a finite number of ms >= 300, got 299$/],
      [{ nodeTtlMs: '15s' }, TypeError, /nodeTtlMs/],
      [{ leaseMs: 0 }, RangeError, /leaseMs must be a finite number of ms >= 1, got 0/],
      [{ shards: 0 }, RangeError, /shards must be an integer >= 1, got 0/],
      [
        { attempts: 3 },
        TypeError,
        /unknown option attempts; known options: redis, namespace, graceMs, nodeTtlMs, leaseMs/,
      ],
      [{ concurrency: 3 }, TypeError, /unknown option concurrency/],
    ])('rejects %o', (bad, type, message) => {
      const make = () => new RedisPresence({ redis, namespace: 'ns', ...bad } as never);
      expect(make).toThrow(type);
      expect(make).toThrow(message);
    });

    it('rejects a missing options object', () => {
      expect(() => new RedisPresence(undefined as never)).toThrow(/options must be an object, got undefined/);
    });

    it('defaults from PRESENCE_DEFAULTS (frozen) and passes the timers options through', () => {
      expect(Object.isFrozen(PRESENCE_DEFAULTS)).toBe(true);
      const presence = new RedisPresence({ redis, namespace: 'ns' });
      expect(presence.graceMs).toBe(PRESENCE_DEFAULTS.graceMs);
      expect(presence.nodeTtlMs).toBe(PRESENCE_DEFAULTS.nodeTtlMs);
      const resolved = resolvePresenceOptions({ redis, namespace: 'ns', shards: 3, graceMs: 0, keyPrefix: 'p' });
      expect(resolved.graceMs).toBe(0);
      expect(resolved.timers).toMatchObject({
        namespace: 'ns',
        shards: 3,
        keyPrefix: 'p',
        leaseMs: PRESENCE_DEFAULTS.leaseMs,
      });
      expect(resolved.resolved.shards).toBe(3);
    });
  });

  describe('#join and #leave', () => {
    const presence = new RedisPresence({ redis, namespace: 'ns' });

    it('reject with PresenceNotRunningError before start()', async () => {
      await expect(presence.join('m', 'c')).rejects.toThrow(PresenceNotRunningError);
      await expect(presence.leave('m', 'c')).rejects.toThrow(
        /^@tickwheel\/redis: RedisPresence.leave\(\) needs a started presence: call start\(\) first/,
      );
      expect(presence.nodeId).toBeUndefined();
    });

    it.each([
      ['', 'c', /member must be a non-empty string, got ""/],
      [7, 'c', /member must be a non-empty string, got 7/],
      ['m', '', /connection must be a non-empty string or an object, got ""/],
      ['m', 42, /connection must be a non-empty string or an object, got 42/],
      ['m', null, /connection must be a non-empty string or an object, got null/],
    ])('reject member %o and connection %o with a TypeError', async (member, connection, message) => {
      await expect(presence.join(member as never, connection as never)).rejects.toThrow(TypeError);
      await expect(presence.leave(member as never, connection as never)).rejects.toThrow(message);
    });
  });

  describe('#members', () => {
    it('checks its count', async () => {
      const presence = new RedisPresence({ redis, namespace: 'ns' });
      await expect(presence.members({ count: 0 }).next()).rejects.toThrow(/count must be an integer >= 1, got 0/);
      await expect(presence.members({ size: 3 } as never).next()).rejects.toThrow(/unknown option size/);
    });
  });
});
