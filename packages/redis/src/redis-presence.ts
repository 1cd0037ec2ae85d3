/**
 * RedisPresence: who is connected across the servers of a namespace, with one `'leave'` per real departure, built on RedisTimers.
 *
 * ## How it works
 * Each member's connection count lives in Redis beside its grace timer `g:<member>`, in the same
 * shard (presence-scripts.ts has the keys and the invariant). A server joins a connection with
 * one script that adds it to its own set of connections and counts it; when the count goes from
 * 0 to 1 the member joined (`'join'` here), or came back within its grace (its grace timer is
 * dropped, nothing is emitted). Leaving the last connection schedules the grace timer in the same
 * script. The grace timer is an ordinary durable timer: whichever server's worker claims it when
 * it is due runs one fenced script that lets the member leave if it still has no connection, and
 * that server emits `'leave'`. So a leave is delivered once, by one server, like any timer.
 *
 * ## Servers die
 * Each server registers under a fresh node id on every shard and holds a lease: the durable timer
 * `n:<node id>`, pushed back every `nodeTtlMs / 3` (a debounce: the timer is replaced, and so
 * never fires while the server lives). When a server is SIGKILLed or cut off from Redis, the
 * timer fires on another server, which reaps the dead one shard by shard: it unregisters the node
 * (joins under that id are refused from then on) and removes its connections, starting each
 * orphaned member's grace. A server whose renewal finds its lease gone, or whose join is
 * refused, registers again under a new id and joins its live connections anew; it never brings
 * the reaped ones back, and it reaps its old id itself in case the reaper did not finish.
 *
 * ## What each server keeps
 * The connections joined here and not left, per member: the truth the server re-registers from.
 * Calls for one member go to Redis one at a time, in order; a call that failed (Redis unreachable
 * for the whole failover budget) rejects, and its connection is synced again on every renewal
 * until Redis agrees with this server.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { TimerHandle, TimingWheel } from '@tickwheel/core';
import { publishNodeReaped, publishPresence } from './channels.js';
import { withFailoverBudget } from './failover.js';
import { presentKey } from './keys.js';
import { kit, resolvePresenceOptions } from './options.js';
import { RedisTimers } from './redis-timers.js';
import type { ScriptCommands } from './scripts.js';
import { ShardCalls } from './shard-calls.js';
import type { FiredTimer, PresenceConnection, PresenceEvent, RedisPresenceOptions } from './types.js';

/** Connections one reap call removes from a shard; the reaper calls again until none are left. */
const REAP_BATCH = 1_000;
const RETRY_SAFE = 'retrying is safe: presence calls are idempotent per connection';

/** Thrown by `join` and `leave` on a RedisPresence that is not started (or is stopping). */
export class PresenceNotRunningError extends Error {
  override readonly name = 'PresenceNotRunningError';

  constructor(what: string) {
    super(
      `@tickwheel/redis: RedisPresence.${what} needs a started presence: call start() first (and not after stop())`,
    );
  }
}

type State = 'stopped' | 'starting' | 'running' | 'stopping';

const leaseId = (node: string): string => `n:${node}`;
const graceId = (member: string): string => `g:${member}`;

/**
 * Presence across the servers of a cluster: joins and leaves per member, one `'leave'` per real
 * departure, and the members of a dead server leaving on their own.
 *
 * A member leaves when its last connection anywhere has been gone for `graceMs`; a re-join
 * within the grace, on any server, cancels that. Its grace is a durable timer of the namespace
 * (a {@link RedisTimers} underneath), so the leave is delivered to exactly one server, and
 * fencing, failover and the failed set apply to it as to any timer.
 *
 * Events:
 * - `'join'` `({ member })` on the server whose `join` took the member from no connection to one.
 * - `'leave'` `({ member })` on the one server whose worker ended the member's grace.
 * - `'error'` `(error)` for Redis errors in the background (renewals, re-syncs, reaps, the
 *   timers' worker); without a listener they are printed with `console.error`.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { RedisPresence } from '@tickwheel/redis';
 *
 * const presence = new RedisPresence({ redis: new Redis(), namespace: 'chat', graceMs: 10_000, nodeTtlMs: 15_000 });
 * presence.on('join', ({ member }) => broadcast({ online: member }));
 * presence.on('leave', ({ member }) => broadcast({ offline: member }));
 * await presence.start();
 * await presence.join('user:7', socket);      // on connect
 * await presence.leave('user:7', socket);     // on close
 * ```
 */
export class RedisPresence extends EventEmitter {
  /** The namespace, as given. */
  readonly namespace: string;
  /** See {@link RedisPresenceOptions.graceMs}. */
  readonly graceMs: number;
  /** See {@link RedisPresenceOptions.nodeTtlMs}. */
  readonly nodeTtlMs: number;
  private readonly calls: ShardCalls;
  private readonly timers: RedisTimers;
  private readonly wheel: TimingWheel;
  private readonly failoverBudgetMs: number;
  /** The grace timers' and leases' retry policy as the scripts write it (record.ts). */
  private readonly policy: string;
  private state: State = 'stopped';
  private node: string | undefined;
  private registering: Promise<void> | undefined;
  private renewing = false;
  private renewHandle: TimerHandle | undefined;
  /** Connections joined on this server and not left, per member. */
  private readonly live = new Map<string, Set<string>>();
  /** Connections whose last call failed: synced again on every renewal. */
  private readonly dirty = new Map<string, Set<string>>();
  /** The last call queued per member: calls for one member go one at a time, in order. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly objectIds = new WeakMap<object, string>();
  private nextObjectId = 0;

  /**
   * @param options - see {@link RedisPresenceOptions}; every bad value throws here
   * @throws TypeError or RangeError naming the option and the value
   */
  constructor(options: RedisPresenceOptions) {
    super();
    const resolved = resolvePresenceOptions(options);
    this.namespace = resolved.resolved.namespace;
    this.graceMs = resolved.graceMs;
    this.nodeTtlMs = resolved.nodeTtlMs;
    this.wheel = resolved.resolved.wheel;
    this.failoverBudgetMs = resolved.resolved.failoverBudgetMs;
    this.policy = `${resolved.resolved.policy.maxAttempts}:${resolved.resolved.policy.backoff}`;
    this.calls = new ShardCalls(resolved.resolved);
    this.timers = new RedisTimers(resolved.timers);
    this.timers.on('error', (error: unknown) => this.report(error));
    this.timers.on('failed', (_timer: FiredTimer, error: unknown) => this.report(error));
  }

  /** This server's current registration (a fresh id per start and per re-registration); undefined when stopped. */
  get nodeId(): string | undefined {
    return this.node;
  }

  /**
   * Registers this server, starts its lease and makes it a worker of the grace timers and of the
   * other servers' leases.
   *
   * @throws Error when already started; `RedisUnavailableError` when Redis stayed unreachable
   * @example
   * ```ts
   * await presence.start();
   * process.on('SIGTERM', () => presence.stop());
   * ```
   */
  async start(): Promise<void> {
    if (this.state !== 'stopped') throw new Error('RedisPresence.start: already started; call stop() first');
    this.state = 'starting';
    try {
      await this.timers.start((timer) => this.onTimer(timer));
      await this.register();
    } catch (error) {
      this.state = 'stopped';
      this.node = undefined;
      await this.timers.stop();
      throw error;
    }
    this.state = 'running';
    this.armRenewal();
  }

  /**
   * Stops this server's part: its connections are ended in Redis at once (each member without
   * another connection starts its grace, and leaves on another server unless it comes back),
   * its lease is dropped, and its worker stops after running handlers finished. When Redis is
   * unreachable the lease runs out instead and another server ends the connections. The Redis
   * client stays open. A no-op when not started.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'stopping') return;
    this.state = 'stopping';
    this.renewHandle?.cancel();
    await this.registering?.catch(() => undefined);
    await Promise.allSettled([...this.queues.values()]);
    const node = this.node;
    if (node !== undefined) await this.retire(node);
    await this.timers.stop();
    this.live.clear();
    this.dirty.clear();
    this.node = undefined;
    this.state = 'stopped';
  }

  /**
   * Adds a connection of `member` on this server. Idempotent per (member, connection).
   *
   * @param member - non-empty string, the member's id (a user id, say)
   * @param connection - an id unique among this server's connections, or the connection object itself
   * @returns true when the member went from no connection anywhere to this one (`'join'` was
   *   emitted); false when it was already there (or only in its grace period: it stays, no event)
   * @throws PresenceNotRunningError when not started; `RedisUnavailableError` when Redis stayed
   *   unreachable (the connection stays joined here and is synced again on the next renewal)
   */
  async join(member: string, connection: PresenceConnection): Promise<boolean> {
    requireMember(member);
    const id = this.connectionId(connection);
    if (this.state !== 'running') throw new PresenceNotRunningError('join()');
    let connections = this.live.get(member);
    if (connections === undefined) this.live.set(member, (connections = new Set()));
    if (connections.has(id)) return false;
    connections.add(id);
    return (await this.serial(member, () => this.sync(member, id))) === 'joined';
  }

  /**
   * Removes a connection of `member` from this server. Idempotent; unknown pairs are ignored.
   *
   * @returns true when it was the member's last connection anywhere: its grace period began
   * @throws PresenceNotRunningError when not started; `RedisUnavailableError` as for `join`
   */
  async leave(member: string, connection: PresenceConnection): Promise<boolean> {
    requireMember(member);
    const id = this.connectionId(connection);
    if (this.state !== 'running') throw new PresenceNotRunningError('leave()');
    const connections = this.live.get(member);
    if (connections === undefined || !connections.delete(id)) return false;
    if (connections.size === 0) this.live.delete(member);
    const reply = await this.serial(member, () => this.sync(member, id));
    return reply !== 'unknown' && reply !== 'more';
  }

  /**
   * Whether `member` is present in the cluster: it joined and has not left (a member in its grace
   * period is still present). Reads Redis; works without `start()`.
   */
  async online(member: string): Promise<boolean> {
    requireMember(member);
    const { index } = this.calls.shardOf(graceId(member));
    const count = await withFailoverBudget(
      this.wheel,
      () => this.calls.client.hget(presentKey(this.calls.keys[index]), member),
      this.failoverBudgetMs,
      `online(${JSON.stringify(member)})`,
      'retrying is safe',
      undefined,
      undefined,
      this.calls.client,
    );
    return count !== null;
  }

  /**
   * The present members, page by page (HSCAN over each shard, as ioredis's `hscanStream` pages
   * it): every member present for the whole walk is listed, a member that joins or leaves during
   * it may be listed or not, and a member may be listed twice when Redis resizes a hash meanwhile.
   *
   * @param options - `count`: the HSCAN COUNT hint per page, 1 to 10 000 (default 100)
   * @example
   * ```ts
   * for await (const page of presence.members({ count: 500 })) send(page);
   * ```
   */
  async *members(options?: { count?: number }): AsyncGenerator<string[], void, undefined> {
    kit.object(options, 'options', ['count']);
    const count = kit.integer(options?.count ?? 100, 'count', 1, 10_000);
    for (const keys of this.calls.keys) {
      const key = presentKey(keys);
      let cursor = '0';
      do {
        const at = cursor;
        const [next, fields] = await withFailoverBudget(
          this.wheel,
          () => this.calls.client.hscan(key, at, 'COUNT', count),
          this.failoverBudgetMs,
          'members()',
          'retrying is safe',
          undefined,
          undefined,
          this.calls.client,
        );
        cursor = next;
        const page: string[] = [];
        for (let i = 0; i < fields.length; i += 2) page.push(fields[i]);
        if (page.length > 0) yield page;
      } while (cursor !== '0');
    }
  }

  /** Strings stand for themselves; objects get an id of their own, kept as long as the object lives. */
  private connectionId(connection: unknown): string {
    if (typeof connection === 'string' && connection !== '') return `s${connection}`;
    if ((typeof connection === 'object' && connection !== null) || typeof connection === 'function') {
      let id = this.objectIds.get(connection);
      if (id === undefined) this.objectIds.set(connection, (id = `o${(this.nextObjectId++).toString(36)}`));
      return id;
    }
    throw kit.typeError('connection', 'must be a non-empty string or an object', connection);
  }

  /** Queues `call` behind the member's earlier calls. */
  private serial<T>(member: string, call: () => Promise<T>): Promise<T> {
    const result = (this.queues.get(member) ?? Promise.resolve()).then(call);
    const tail = result.catch(() => undefined);
    this.queues.set(member, tail);
    void tail.then(() => {
      if (this.queues.get(member) === tail) this.queues.delete(member);
    });
    return result;
  }

  /**
   * Makes Redis agree with this server about one connection: joined when it is live here, left
   * when not. Returns the script's reply; a failure leaves the connection dirty.
   */
  private async sync(member: string, connection: string): Promise<string> {
    const { index } = this.calls.shardOf(graceId(member));
    for (;;) {
      const node = await this.currentNode();
      const joining = this.live.get(member)?.has(connection) === true;
      let reply: string;
      try {
        reply = joining
          ? await this.write<string>('tickwheelPresenceJoin', index, [node, member, connection], 'join')
          : await this.write<string>(
              'tickwheelPresenceLeave',
              index,
              [node, member, connection, String(this.graceMs), this.policy, this.calls.channel, String(index)],
              'leave',
            );
      } catch (error) {
        mark(this.dirty, member, connection, true);
        throw error;
      }
      mark(this.dirty, member, connection, false);
      if (reply !== 'gone') {
        if (reply === 'joined') {
          publishPresence(this.namespace, member, 'join', 0);
          this.emit('join', { member } satisfies PresenceEvent);
        }
        return reply;
      }
      // This registration was reaped: register anew, then join under the new id (not while stopping).
      if (this.state !== 'running') return reply;
      await this.reregister(node);
    }
  }

  private write<T>(command: keyof ScriptCommands, index: number, args: string[], what: string): Promise<T> {
    return this.calls.write<T>(command, index, args, `RedisPresence ${what}`, RETRY_SAFE);
  }

  /** The node id to write under, once a registration under way finished. */
  private async currentNode(): Promise<string> {
    await this.registering;
    if (this.node === undefined) throw new PresenceNotRunningError('join()');
    return this.node;
  }

  /** A fresh node id, registered on every shard before its lease exists (so no reaper can run before). */
  private async register(): Promise<void> {
    const node = randomBytes(9).toString('base64url');
    await Promise.all(
      this.calls.keys.map((_, index) => this.write<number>('tickwheelPresenceHello', index, [node], 'start')),
    );
    await this.timers.schedule(leaseId(node), this.nodeTtlMs, undefined, { ifExists: 'replace' });
    this.node = node;
  }

  /**
   * Registers anew after registration `stale` lost its lease (once however many calls noticed),
   * then syncs every live connection under the new id and reaps the old one.
   */
  private reregister(stale: string): Promise<void> {
    if (this.node !== stale || this.state !== 'running') return this.registering ?? Promise.resolve();
    this.registering ??= (async () => {
      await this.register();
      for (const [member, connections] of this.live) for (const c of connections) mark(this.dirty, member, c, true);
      void this.resync();
      void this.retire(stale);
    })().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  /** Syncs every dirty connection, one member at a time each. */
  private async resync(): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (const [member, connections] of this.dirty) {
      for (const connection of connections) calls.push(this.serial(member, () => this.sync(member, connection)));
    }
    const failed = (await Promise.allSettled(calls)).find((r) => r.status === 'rejected');
    if (failed?.status === 'rejected') this.report(failed.reason);
  }

  /** Ends a registration of this server: its connections are reaped and its lease dropped. Errors are reported. */
  private async retire(node: string): Promise<void> {
    try {
      await this.reap(node);
      await this.timers.cancel(leaseId(node));
    } catch (error) {
      this.report(error);
    }
  }

  private armRenewal(): void {
    const period = this.nodeTtlMs / 3;
    this.renewHandle = this.wheel.schedule(period, () => {
      if (this.state !== 'running') return;
      this.armRenewal();
      if (!this.renewing) void this.renew();
    });
  }

  /** Pushes this server's lease back, or registers again when it ran out; then syncs what is dirty. */
  private async renew(): Promise<void> {
    const node = this.node;
    if (node === undefined) return;
    this.renewing = true;
    try {
      const id = leaseId(node);
      const { index } = this.calls.shardOf(id);
      const due = await this.write<string>(
        'tickwheelPresenceRenew',
        index,
        [id, String(this.nodeTtlMs), this.policy, this.calls.channel, String(index)],
        'lease renewal',
      );
      if (due === '') await this.reregister(node);
      else if (this.dirty.size > 0) await this.resync();
    } catch (error) {
      this.report(error);
    } finally {
      this.renewing = false;
    }
  }

  /** Runs the presence's timers: a member's grace ended, or a server's lease ran out. */
  private async onTimer(timer: FiredTimer): Promise<void> {
    if (timer.id.startsWith('g:')) {
      const member = timer.id.slice(2);
      const { index } = this.calls.shardOf(timer.id);
      const at = await this.write<string>('tickwheelPresenceLeft', index, [member, timer.token], 'grace end');
      if (at === '') return;
      publishPresence(this.namespace, member, 'leave', Number(at) - timer.dueAt);
      this.emit('leave', { member } satisfies PresenceEvent);
    } else if (timer.id.startsWith('n:')) {
      await this.reap(timer.id.slice(2), timer);
    }
  }

  /** Ends every connection of registration `node`, shard by shard; `timer`: the lease being handled, kept while it runs. */
  private async reap(node: string, timer?: FiredTimer): Promise<void> {
    let removed = 0;
    for (let index = 0; index < this.calls.keys.length; index++) {
      for (;;) {
        const reply = await this.write<string>(
          'tickwheelPresenceReap',
          index,
          [node, String(REAP_BATCH), String(this.graceMs), this.policy, this.calls.channel, String(index)],
          'reap',
        );
        const [left, taken] = reply.split(':');
        removed += Number(taken);
        if (left === '0') break;
        await timer?.extendLease();
      }
    }
    publishNodeReaped(this.namespace, node, removed);
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
    else console.error('[@tickwheel/redis] presence error:', error);
  }
}

function requireMember(member: unknown): void {
  if (typeof member !== 'string' || member === '') throw kit.typeError('member', 'must be a non-empty string', member);
}

/** Adds (`on`) or removes a connection in a member -> connections map. */
function mark(map: Map<string, Set<string>>, member: string, connection: string, on: boolean): void {
  let set = map.get(member);
  if (on) {
    if (set === undefined) map.set(member, (set = new Set()));
    set.add(connection);
  } else if (set?.delete(connection) && set.size === 0) {
    map.delete(member);
  }
}
