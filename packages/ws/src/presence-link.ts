/**
 * PresenceLink: joins a server's connections to a cluster-wide presence (the `presence` and `memberOf` options) and leaves them when the heartbeat lets them go.
 *
 * The heartbeat knows when a connection is gone for good: its socket closed, the heartbeat
 * declared it dead (and terminated it), or the heartbeat stopped watching it (`remove()`,
 * `stop()`). Each of those is a leave here. The member comes from the upgrade request, which only
 * the server's `'connection'` event carries, so only connections accepted that way are tracked.
 * The tracker is structural (`PresenceTracker`): this package does not depend on
 * `@tickwheel/redis`, whose `RedisPresence` is one.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import type { PresenceTracker } from './types.js';

export class PresenceLink<S extends object> {
  /** The member of each tracked connection. */
  private readonly members = new WeakMap<S, string>();

  constructor(
    private readonly presence: PresenceTracker,
    private readonly memberOf: (request: IncomingMessage) => string | undefined,
  ) {}

  /** A connection the heartbeat now watches, with its upgrade request: joined when `memberOf` names a member. */
  admitted(socket: S, request: IncomingMessage): void {
    const member = this.memberOf(request);
    if (member === undefined || this.members.has(socket)) return;
    this.members.set(socket, member);
    settle(this.presence.join(member, socket));
  }

  /** A connection the heartbeat let go: left, when it was joined. */
  gone(socket: S): void {
    const member = this.members.get(socket);
    if (member === undefined) return;
    this.members.delete(socket);
    settle(this.presence.leave(member, socket));
  }
}

/**
 * A tracker's failure is its own to report and recover from (RedisPresence syncs a failed call
 * again on its next renewal and reports errors on its `'error'` event), so a returned promise's
 * rejection is only kept from becoming an unhandled one.
 */
function settle(result: unknown): void {
  if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function')
    (result as PromiseLike<unknown>).then(undefined, () => undefined);
}
