import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { shardOf } from '../src/keys.js';
import { resolveOptions } from '../src/options.js';
import { RETRY_SAFE, ShardCalls } from '../src/shard-calls.js';
import type { RedisClient, RedisTimersOptions } from '../src/types.js';
import { uniqueNamespace } from './helpers/wait.js';

function calls(options: Partial<RedisTimersOptions> = {}) {
  const namespace = uniqueNamespace('calls');
  const redis = new RedisMock() as unknown as RedisClient;
  return { namespace, calls: new ShardCalls(resolveOptions({ redis, namespace, timeSource: 'local', ...options })) };
}

describe('shard-calls', () => {
  describe('ShardCalls', () => {
    it('knows the keys of every shard and the namespace’s wake-up channel', () => {
      const { namespace, calls: c } = calls({ shards: 3, keyPrefix: 'app' });
      expect(c.keys.map((k) => k.index)).toEqual([0, 1, 2].map((i) => `app:{${namespace}:${i}}:index`));
      expect(c.channel).toBe(`app:{${namespace}}:wake`);
    });

    it('finds the shard of an id as every process does (keys.ts’s hash)', () => {
      const { calls: c } = calls({ shards: 8 });
      for (const id of ['a', 'buff:42', 'session:7']) {
        const { index, keys } = c.shardOf(id);
        expect(index).toBe(shardOf(id, 8));
        expect(keys[0]).toBe(c.keys[index].due);
      }
    });

    it("passes this process's clock to the scripts with timeSource 'local', and '' (the server's TIME) otherwise", () => {
      expect(Number(calls().calls.now())).toBeCloseTo(Date.now(), -3);
      expect(calls({ timeSource: 'redis' }).calls.now()).toBe('');
    });

    describe('#run', () => {
      it('runs a script on the shard and returns its reply', async () => {
        const { calls: c } = calls();
        const { index, keys } = c.shardOf('a');
        const before = Date.now();
        const args = ['a', 'in', '100', '', c.channel, '0', 'replace', '3', '', ''];
        const [due] = await c.write<string[]>('tickwheelSchedule', index, args, 'schedule("a")', RETRY_SAFE.schedule);
        expect(Number(due)).toBeGreaterThanOrEqual(before + 100);
        expect(await c.run('tickwheelGet', keys, ['a'], 'get("a")', RETRY_SAFE.other, false)).toHaveLength(6);
      });

      it('repeats a call through a transient error (a failover) within the budget', async () => {
        const { calls: c } = calls({ failoverBudgetMs: 2_000 });
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        const real = client.tickwheelGet.bind(client);
        let tries = 0;
        client.tickwheelGet = (...args) =>
          ++tries === 1 ? Promise.reject(new Error('LOADING Redis is loading')) : real(...args);
        expect(await c.run('tickwheelGet', c.shardOf('x').keys, ['x'], 'get("x")', RETRY_SAFE.other, false)).toBe('');
        expect(tries).toBe(2);
      });

      it('after a write, retries only the wait for replicas, never the write itself (it landed)', async () => {
        const namespace = uniqueNamespace('calls');
        const redis = new RedisMock() as unknown as RedisClient;
        let waits = 0;
        // The replicas' side: one replica connected; the first WAIT fails as during a failover.
        (redis as unknown as { pipeline: () => unknown }).pipeline = () => {
          const ops: string[] = [];
          const p = {
            exists: () => (ops.push('exists'), p),
            info: () => (ops.push('info'), p),
            wait: () => (ops.push('wait'), p),
            exec: () =>
              Promise.resolve(
                ops.includes('info')
                  ? [
                      [null, 1],
                      [null, 'connected_slaves:1\r\n'],
                    ]
                  : ++waits === 1
                    ? [
                        [null, 1],
                        [new Error('CLUSTERDOWN The cluster is down'), null],
                      ]
                    : [
                        [null, 1],
                        [null, 1],
                      ],
              ),
          };
          return p;
        };
        const c = new ShardCalls(
          resolveOptions({ redis, namespace, timeSource: 'local', waitForReplicas: 1, failoverBudgetMs: 2_000 }),
        );
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        const real = client.tickwheelSchedule.bind(client);
        let writes = 0;
        client.tickwheelSchedule = (...args) => (writes++, real(...args));
        const { index, keys } = c.shardOf('a');
        const args = ['a', 'in', '100', '', c.channel, '0', 'replace', '3', '', ''];
        const [due] = await c.write<string[]>('tickwheelSchedule', index, args, 'schedule("a")', RETRY_SAFE.schedule);
        expect([writes, waits]).toEqual([1, 2]);
        expect(await c.run('tickwheelGet', keys, ['a'], 'get("a")', RETRY_SAFE.other, false)).toContain(due);
      });

      it('gives up with the error when it is not transient', async () => {
        const { calls: c } = calls();
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        client.tickwheelGet = () => Promise.reject(new Error('ERR wrong number of arguments'));
        await expect(
          c.run('tickwheelGet', c.shardOf('x').keys, ['x'], 'get("x")', RETRY_SAFE.other, false),
        ).rejects.toThrow(/wrong number of arguments/);
      });
    });

    describe('#write', () => {
      it('retries a try refused as late, as a transient error', async () => {
        const { calls: c } = calls({ failoverBudgetMs: 2_000 });
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        const real = client.tickwheelCancel.bind(client);
        let tries = 0;
        client.tickwheelCancel = (...args) => (++tries === 1 ? real(...args.slice(0, -2), '1', '2') : real(...args));
        expect(await c.write('tickwheelCancel', c.shardOf('a').index, ['a'], 'cancel("a")', RETRY_SAFE.cancel)).toBe(0);
        expect(tries).toBe(2);
      });

      it('sends every try of a call with its call id and the calls hash, and a finished call’s id with the next write', async () => {
        const { namespace, calls: c } = calls({ failoverBudgetMs: 2_000 });
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        const real = client.tickwheelCancel.bind(client);
        const sent: string[][] = [];
        client.tickwheelCancel = (...args) => {
          sent.push(args);
          return sent.length === 1 ? Promise.reject(new Error('Connection is closed.')) : real(...args);
        };
        const { index } = c.shardOf('a');
        await c.write('tickwheelCancel', index, ['a'], 'cancel("a")', RETRY_SAFE.cancel);
        await c.write('tickwheelCancel', index, ['a'], 'cancel("a")', RETRY_SAFE.cancel);
        const key = `tickwheel:{${namespace}:0}:calls:${c.log.clientId}`;
        // keys (10), id, then call id, finished calls, time to live (budget + a try), deadline, time.
        expect(sent.map((args) => [args[9], ...args.slice(11, 14)])).toEqual([
          [key, '0', '', '4000'],
          [key, '0', '', '4000'],
          [key, '1', '0', '4000'],
        ]);
        expect(await c.client.hkeys(key)).toEqual(['1']);
      });

      it("carries each try's deadline on the server clock, from one TIME offset against the wheel's clock", async () => {
        // The wheel's clock times the try and the offset's age; TIME is the one other clock.
        const clock = new ManualClock(1_000);
        const wheel = new TimingWheel({ clock });
        const { calls: c } = calls({ timeSource: 'redis', wheel });
        const client = c.client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
        const serverMs = 1_800_000_000_000;
        let timeReads = 0;
        client.time = () => {
          timeReads++;
          return Promise.resolve([
            String(Math.floor((serverMs + clock.now()) / 1000)),
            String(((serverMs + clock.now()) % 1000) * 1000),
          ]);
        };
        const deadlines: string[] = [];
        client.tickwheelCancel = (...args) => {
          deadlines.push(args[args.length - 2]);
          return Promise.resolve(1);
        };
        const cancel = () => c.write('tickwheelCancel', c.shardOf('a').index, ['a'], 'cancel("a")', RETRY_SAFE.cancel);
        await cancel();
        clock.advance(3_000); // within the offset's 5 s: no new TIME
        await cancel();
        clock.advance(2_001); // past it: TIME is read again
        await cancel();
        // A try has TRY_TIMEOUT_MS (2 s), less the 5 ms margin, from its start on the wheel's clock.
        expect(deadlines).toEqual([1_000, 4_000, 6_001].map((at) => String(serverMs + at + 2_000 - 5)));
        expect(timeReads).toBe(2);
        expect(wheel.size).toBe(0); // every try's race timer went with its answer
        wheel.close();
      });
    });
  });
});
