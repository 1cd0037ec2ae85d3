import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { Deliveries, type DeliveryHost, type DeliveryShard } from '../src/delivery.js';
import type { FiredTimer } from '../src/types.js';
import type { WorkerContext } from '../src/delivery.js';
import type { StaleStage } from '../src/types.js';
import { until } from './helpers/wait.js';

// Deliveries with a fake worker (the host) and a fake client that records the fenced calls and
// answers from a script: the handler, the lease fence, the ack batch and the failure report.

const KEYS = ['due', 'lease', 'timers', 'seq', 'failed', 'reasons', 'claims', 'index', 'b'] as DeliveryShard['keys'];

function setup(
  handler: (timer: FiredTimer) => unknown,
  replies: { ack?: string[]; fail?: string; extend?: string } = {},
) {
  const clock = new ManualClock(1_000);
  const wheel = new TimingWheel({ clock });
  wheels.push(wheel);
  const sent: string[][] = [];
  // Acks, extends and failure reports go through ctx.write (a call of the instance's log, see call-log.ts).
  const NAMES: Record<string, string> = { tickwheelAck: 'ack', tickwheelExtend: 'extend', tickwheelFail: 'fail' };
  const write = (command: string, index: number, args: string[]) => {
    sent.push([NAMES[command], ...args]);
    expect(index).toBe(2);
    if (command === 'tickwheelAck') return Promise.resolve(replies.ack ?? []);
    return Promise.resolve(command === 'tickwheelExtend' ? (replies.extend ?? '9000') : (replies.fail ?? '5000'));
  };
  const failed: Array<[string, unknown]> = [];
  const stale: Array<[string, StaleStage]> = [];
  const shard: DeliveryShard = { index: 2, keys: KEYS, acks: [] };
  let armed = 0;
  const host: DeliveryHost = {
    shards: [shard],
    serverNow: (local) => local,
    track: (promise) => promise,
    arm: () => void armed++,
    report: (error) => {
      throw error;
    },
  };
  const ctx = {
    write,
    wheel,
    leaseMs: 10_000,
    now: () => String(clock.now()),
    handler,
    onFailed: (timer: FiredTimer, error: unknown) => failed.push([timer.id, error]),
    onStale: (timer: FiredTimer, stage: StaleStage) => stale.push([timer.id, stage]),
  } as unknown as WorkerContext;
  const deliveries = new Deliveries(ctx, host);
  const fire = (id: string, attempts = 1, leaseExpiresAt = 11_000, backoff = 'f1000') => {
    const timer = deliveries.fired(shard, id, `t-${id}`, 900, attempts, 3, leaseExpiresAt, '{"n":1}');
    deliveries.run(shard, { timer, backoff });
    return timer;
  };
  return { clock, sent, failed, stale, deliveries, fire, armed: () => armed };
}

const wheels: TimingWheel[] = [];
afterEach(() => {
  for (const wheel of wheels.splice(0)) wheel.close();
});

describe('delivery', () => {
  describe('Deliveries#fired', () => {
    it('makes the FiredTimer a handler gets, with its payload parsed afresh', () => {
      const { deliveries } = setup(() => undefined);
      const timer = deliveries.fired({ index: 0, keys: KEYS, acks: [] }, 'a', '7', 900, 2, 3, 11_000, '{"n":1}');
      expect(timer).toMatchObject({
        id: 'a',
        token: '7',
        dueAt: 900,
        attempts: 2,
        maxAttempts: 3,
        leaseExpiresAt: 11_000,
      });
      expect(timer.payload).toEqual({ n: 1 });
    });

    it('extends the lease fenced by the token, in whole ms, and reports a lost lease as undefined', async () => {
      const { deliveries, sent } = setup(() => undefined, { extend: '' });
      const timer = deliveries.fired({ index: 2, keys: KEYS, acks: [] }, 'a', '7', 900, 1, 3, 11_000, '');
      expect(await timer.extendLease(1_500.2)).toBeUndefined();
      expect(sent).toEqual([['extend', 'a', '7', '1501']]);
      expect(timer.payload).toBeUndefined();
    });

    it('updates leaseExpiresAt when the extension is granted', async () => {
      const { deliveries } = setup(() => undefined);
      const timer = deliveries.fired({ index: 2, keys: KEYS, acks: [] }, 'a', '7', 900, 1, 3, 11_000, '');
      expect(await timer.extendLease()).toBe(9_000);
      expect(timer.leaseExpiresAt).toBe(9_000);
    });
  });

  describe('Deliveries#run', () => {
    it('acks handled timers in one batch per shard, and frees the handler slot', async () => {
      const { fire, sent, deliveries, armed } = setup(() => undefined);
      fire('a');
      fire('b');
      expect(deliveries.running).toBe(2);
      await until(() => sent.length > 0, 'the ack');
      expect(sent).toEqual([['ack', 'a', 't-a', 'b', 't-b']]);
      expect(deliveries.running).toBe(0);
      expect(armed()).toBeGreaterThanOrEqual(2);
    });

    it('never starts a handler whose lease has passed: that is a stale start', () => {
      let ran = false;
      const { fire, stale, deliveries } = setup(() => {
        ran = true;
      });
      fire('a', 1, 1_000);
      expect(ran).toBe(false);
      expect(stale).toEqual([['a', 'start']]);
      expect(deliveries.running).toBe(0);
    });

    it('reports an ack Redis refused (the lease was lost, or the timer cancelled) as stale, and only that one', async () => {
      const { fire, stale } = setup(() => undefined, { ack: ['a'] });
      fire('a');
      fire('b');
      await until(() => stale.length > 0, 'the refusal');
      await new Promise((resolve) => setImmediate(resolve));
      expect(stale).toEqual([['a', 'ack']]);
    });

    it('reports a failed attempt with its backoff delay and the error, cut to 2 000 characters', async () => {
      const error = new Error('x'.repeat(3_000));
      const { fire, sent, failed } = setup(() => Promise.reject(error));
      fire('a', 2, 11_000, 'e1000');
      await until(() => sent.length > 0, 'the failure report');
      expect(failed).toEqual([['a', error]]);
      const [kind, id, token, delay, reason, , shard] = sent[0];
      expect([kind, id, token, delay, shard]).toEqual(['fail', 'a', 't-a', '2000', '2']);
      expect(reason).toHaveLength(2_000);
      expect(reason.startsWith('Error: xxx')).toBe(true);
    });

    it('treats a handler that throws synchronously like one that rejects', async () => {
      const { fire, failed, stale } = setup(
        () => {
          throw new TypeError('bad payload');
        },
        { fail: '' },
      );
      fire('a');
      await until(() => stale.length > 0, 'the refused failure report');
      expect(failed.map(([id, e]) => [id, (e as Error).message])).toEqual([['a', 'bad payload']]);
      expect(stale).toEqual([['a', 'fail']]);
    });
  });
});
