import { describe, expect, it } from 'vitest';
import { channelListener } from '../../../tests/helpers/channel-listener.js';
import { firedChannel, publishFired, publishNodeReaped, publishPresence, publishStale } from '../src/channels.js';
import {
  REDIS_DUPLICATE_CHANNEL,
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  REDIS_NODE_REAPED_CHANNEL,
  REDIS_PRESENCE_CHANNEL,
} from '../src/index.js';

describe('channels', () => {
  const listen = channelListener();

  it('names its channels tickwheel:redis:*', () => {
    expect([
      REDIS_FIRED_CHANNEL,
      REDIS_LEASE_LOST_CHANNEL,
      REDIS_DUPLICATE_CHANNEL,
      REDIS_PRESENCE_CHANNEL,
      REDIS_NODE_REAPED_CHANNEL,
    ]).toEqual([
      'tickwheel:redis:fired',
      'tickwheel:redis:lease-lost',
      'tickwheel:redis:duplicate',
      'tickwheel:redis:presence',
      'tickwheel:redis:node-reaped',
    ]);
  });

  describe('publishFired', () => {
    it('publishes the lateness on the server clock, never negative', () => {
      const messages = listen(REDIS_FIRED_CHANNEL);
      publishFired('buffs', 'a', 1_000, 1_004, 1);
      // A claim can carry a server time a tick before dueAt (TIME is floored to the ms).
      publishFired('buffs', 'b', 1_000, 999, 2);
      expect(messages).toEqual([
        { namespace: 'buffs', id: 'a', dueAt: 1_000, lateMs: 4, attempts: 1 },
        { namespace: 'buffs', id: 'b', dueAt: 1_000, lateMs: 0, attempts: 2 },
      ]);
    });

    it('does nothing while nobody listens', () => {
      expect(firedChannel.hasSubscribers).toBe(false);
      expect(() => publishFired('n', 'a', 1, 2, 1)).not.toThrow();
    });
  });

  describe('publishStale', () => {
    it('publishes a delivery not started as a suppressed duplicate, a refused ack or report as a lost lease', () => {
      const lost = listen(REDIS_LEASE_LOST_CHANNEL);
      const duplicates = listen(REDIS_DUPLICATE_CHANNEL);
      publishStale('buffs', 'a', 3, 'ack');
      publishStale('buffs', 'b', 1, 'fail');
      publishStale('buffs', 'c', 2, 'start');
      expect(lost).toEqual([
        { namespace: 'buffs', id: 'a', attempts: 3, stage: 'ack' },
        { namespace: 'buffs', id: 'b', attempts: 1, stage: 'fail' },
      ]);
      expect(duplicates).toEqual([{ namespace: 'buffs', id: 'c', attempts: 2 }]);
    });
  });

  describe('publishPresence and publishNodeReaped', () => {
    it('publish joins, leaves with their lateness (never negative) and reaped nodes', () => {
      const presence = listen(REDIS_PRESENCE_CHANNEL);
      const reaped = listen(REDIS_NODE_REAPED_CHANNEL);
      publishPresence('chat', 'alice', 'join', 0);
      publishPresence('chat', 'alice', 'leave', 12);
      publishPresence('chat', 'bob', 'leave', -1);
      publishNodeReaped('chat', 'n1', 3);
      expect(presence).toEqual([
        { namespace: 'chat', member: 'alice', event: 'join', lateMs: 0 },
        { namespace: 'chat', member: 'alice', event: 'leave', lateMs: 12 },
        { namespace: 'chat', member: 'bob', event: 'leave', lateMs: 0 },
      ]);
      expect(reaped).toEqual([{ namespace: 'chat', node: 'n1', connections: 3 }]);
    });
  });
});
