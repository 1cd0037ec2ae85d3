/**
 * Exactly-once through faults between a write and its reply, on a real redis-server: a proxy
 * (helpers/fault-proxy.ts) forwards the commands of the client under test and drops the replies,
 * then cuts the connection, so ioredis sends the unanswered commands again after it reconnects
 * (its default, autoResendUnfulfilledCommands); `CLIENT PAUSE ... WRITE` holds writes past the
 * 2 s try timeout, so the budget loop abandons a try that Redis runs later. Each write carries its
 * call's id, so a second arrival of a write that landed changes nothing and answers as the first.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer, StaleStage } from '../../src/types.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';

describe('RedisTimers exactly once through lost replies', () => {
  const clients: Redis[] = [];
  const proxies: FaultProxy[] = [];
  const servers: RedisServer[] = [];
  const started: RedisTimers[] = [];

  afterEach(async () => {
    await Promise.all(started.splice(0).map((t) => t.stop()));
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  function client(url: string): Redis {
    const c = new Redis(url);
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  }

  /** A namespace, a client through a fresh proxy, and a direct client to look at the keys. */
  async function setup(label: string, url = inject('redisUrl')) {
    const proxy = await startFaultProxy(Number(new URL(url).port));
    proxies.push(proxy);
    const namespace = uniqueNamespace(label);
    const base = `tickwheel:{${namespace}:0}`;
    const direct = client(url);
    return {
      proxy,
      namespace,
      direct,
      viaProxy: client(proxy.url),
      /** The stored timer `id`, read past the proxy; undefined when there is none. */
      record: (id: string) => new RedisTimers({ redis: direct, namespace }).get(id),
      /** How many tokens the shard handed out: one per schedule written and per timer claimed. */
      tokens: async () => Number((await direct.get(`${base}:seq`)) ?? 0),
      leased: () => direct.zcard(`${base}:lease`),
    };
  }

  /**
   * Waits until the worker's subscriber, cut with the rest, has subscribed again, so that the
   * test ends with the worker as it runs between faults (a stop during the resubscribe has its
   * own test below).
   */
  async function resubscribed(direct: Redis, namespace: string): Promise<void> {
    const channel = `tickwheel:{${namespace}}:wake`;
    await until(async () => Number((await direct.pubsub('NUMSUB', channel))[1]) > 0, 'the subscriber back');
    await sleep(50); // its SUBSCRIBE reply still crosses the proxy
  }

  /** Drops replies until `applied` holds on the server, then cuts: ioredis sends the commands again. */
  async function loseReplyOnce(proxy: FaultProxy, applied: () => Promise<boolean>): Promise<void> {
    // Applied, and its reply reached the proxy and was dropped.
    await until(async () => (await applied()) && proxy.dropped.replies > 0, 'the write to be applied');
    proxy.dropReplies = false;
    proxy.cut();
  }

  it('a worker stopped while its subscriber resubscribes after a reconnect leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { proxy, namespace, viaProxy } = await setup('stop-resubscribe');
      const timers = new RedisTimers({ redis: viaProxy, namespace, pollIntervalMs: 60_000 });
      await timers.start(() => undefined);
      // The subscriber's SUBSCRIBE after the reconnect gets no reply: it is in flight when stop() closes it.
      proxy.dropReplies = 'subscribe';
      proxy.cut();
      await until(() => proxy.dropped.replies > 0, 'the subscriber back, its SUBSCRIBE unanswered');
      await timers.stop();
      await sleep(100); // Node reports an unhandled rejection once the microtasks after it ran
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a schedule whose reply was lost and which arrives again resolves with the due time stored, written once', async () => {
    const { proxy, namespace, viaProxy, record, tokens } = await setup('once-schedule');
    const timers = new RedisTimers({ redis: viaProxy, namespace });
    await timers.schedule('warm-up', 60_000); // scripts loaded, the server clock's offset read
    proxy.dropReplies = true;
    const call = timers.schedule('x', 60_000, 'v1');
    await loseReplyOnce(proxy, async () => (await record('x')) !== undefined);
    const dueAt = await call;
    expect((await record('x'))?.dueAt).toBe(dueAt);
    expect(await tokens()).toBe(2); // 'warm-up' and 'x', each written once;
  });

  it('a late second arrival of a schedule never overrides a newer cancel or schedule of the same id', async () => {
    const { proxy, namespace, viaProxy, direct, record } = await setup('once-late');
    const timers = new RedisTimers({ redis: viaProxy, namespace });
    const other = new RedisTimers({ redis: direct, namespace });
    await timers.schedule('warm-up', 60_000);
    proxy.dropReplies = true;
    const cancelled = timers.schedule('cancelled', 60_000, 'old');
    const replaced = timers.schedule('replaced', 60_000, 'old');
    await until(
      async () => (await record('cancelled')) !== undefined && (await record('replaced')) !== undefined,
      'both applied',
    );
    expect(await other.cancel('cancelled')).toBe(true);
    const newer = await other.schedule('replaced', 5_000, 'new');
    await loseReplyOnce(proxy, () => Promise.resolve(true));
    await Promise.all([cancelled, replaced]);
    expect(await timers.get('cancelled')).toBeUndefined();
    expect(await timers.get('replaced')).toMatchObject({ payload: 'new', dueAt: newer });
  });

  it('a cancel whose reply was lost reports true, and its second arrival does not delete a newer schedule', async () => {
    const { proxy, namespace, viaProxy, direct, record } = await setup('once-cancel');
    const timers = new RedisTimers({ redis: viaProxy, namespace });
    const other = new RedisTimers({ redis: direct, namespace });
    await timers.schedule('x', 60_000, 'old');
    proxy.dropReplies = true;
    const call = timers.cancel('x');
    await until(async () => (await record('x')) === undefined, 'the cancel applied');
    await other.schedule('x', 60_000, 'new');
    await loseReplyOnce(proxy, () => Promise.resolve(true));
    expect(await call).toBe(true);
    expect(await timers.get('x')).toMatchObject({ payload: 'new' });
  });

  it(
    'writes held by CLIENT PAUSE past the try timeout land once: the abandoned try is refused, the retry answers',
    { timeout: 20_000 },
    async () => {
      const server = await startRedisServer();
      servers.push(server);
      const { namespace, direct, record, tokens } = await setup('once-pause', server.url);
      const timers = new RedisTimers({ redis: client(server.url), namespace });
      await timers.schedule('gone', 60_000);
      await direct.call('CLIENT', 'PAUSE', '2500', 'WRITE');
      const pausedAt = Date.now();
      const [dueAt, existed] = await Promise.all([timers.schedule('x', 1_000, 'v1'), timers.cancel('gone')]);
      expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(2_400);
      expect((await record('x'))?.dueAt).toBe(dueAt);
      expect(existed).toBe(true);
      expect(await tokens()).toBe(2); // 'gone' and 'x', each written once
    },
  );

  /** A worker on the proxied client that records what it fires and every 'stale' event. */
  async function worker(
    timers: RedisTimers,
    handler: (timer: FiredTimer) => unknown = () => undefined,
  ): Promise<{ fired: FiredTimer[]; stale: [string, StaleStage][] }> {
    const fired: FiredTimer[] = [];
    const stale: [string, StaleStage][] = [];
    timers.on('stale', (timer: FiredTimer, stage: StaleStage) => stale.push([timer.id, stage]));
    timers.on('error', () => undefined);
    await timers.schedule('warm-up', 60_000); // the server clock's offset read, for the deadlines
    await timers.start(async (timer) => {
      fired.push({ ...timer });
      await handler(timer);
    });
    started.push(timers);
    return { fired, stale };
  }

  it('an ack whose reply was lost and which arrives again is not reported stale', async () => {
    const { proxy, namespace, viaProxy, direct, record } = await setup('once-ack');
    const timers = new RedisTimers({ redis: viaProxy, namespace });
    const { fired, stale } = await worker(timers, () => {
      proxy.dropReplies = true; // the ack goes out after the handler resolved
    });
    await new RedisTimers({ redis: direct, namespace }).schedule('a', 50);
    await loseReplyOnce(proxy, async () => fired.length === 1 && (await record('a')) === undefined);
    await resubscribed(direct, namespace);
    await timers.stop();
    expect(stale).toEqual([]);
    expect(fired.map((t) => t.id)).toEqual(['a']);
  });

  it('a failure report whose reply was lost and which arrives again is not reported stale', async () => {
    const { proxy, namespace, viaProxy, direct, record } = await setup('once-fail');
    const timers = new RedisTimers({ redis: viaProxy, namespace, backoff: 60_000 });
    const { fired, stale } = await worker(timers, () => {
      proxy.dropReplies = true;
      throw new Error('boom');
    });
    await new RedisTimers({ redis: direct, namespace }).schedule('a', 50);
    await loseReplyOnce(
      proxy,
      async () =>
        fired.length === 1 &&
        (await record('a'))?.attempts === 1 &&
        (await direct.zcard(`tickwheel:{${namespace}:0}:lease`)) === 0,
    );
    await resubscribed(direct, namespace);
    await timers.stop();
    expect(stale).toEqual([]);
  });

  for (const abandoned of [false, true]) {
    it(
      `a claim whose reply was lost (${abandoned ? 'abandoned after 2 s, then' : ''} sent again by ioredis) hands its timers out at once, not after the default lease`,
      { timeout: 20_000 },
      async () => {
        const { proxy, namespace, viaProxy, direct, leased } = await setup('once-claim');
        const timers = new RedisTimers({ redis: viaProxy, namespace });
        expect(timers.leaseMs).toBe(30_000);
        const { fired, stale } = await worker(timers);
        const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
        const scheduler = new RedisTimers({ redis: direct, namespace });
        const at = Date.now() + 300; // one due time: one claim takes them all
        await Promise.all(ids.map((id) => scheduler.schedule(id, { at })));
        // The reply of the claim that takes them is dropped, and everything after it on its connection.
        proxy.dropReplies = 'c0';
        await until(async () => (await leased()) === 20 && proxy.dropped.replies > 0, 'the claim applied');
        // Abandoned: the worker's next claim goes out on the mute connection too.
        if (abandoned) await sleep(2_300);
        const cutAt = Date.now();
        await loseReplyOnce(proxy, () => Promise.resolve(true));
        await until(() => fired.length >= 20, 'every timer delivered', 8_000);
        console.log(
          `lost claim reply${abandoned ? ' (abandoned)' : ''}: all 20 delivered ${Date.now() - cutAt} ms after the cut (leaseMs 30 000)`,
        );
        await sleep(100);
        expect(fired.map((t) => t.id).sort()).toEqual([...ids].sort());
        expect(fired.every((t) => t.attempts === 1)).toBe(true);
        expect(stale).toEqual([]);
      },
    );
  }
});
