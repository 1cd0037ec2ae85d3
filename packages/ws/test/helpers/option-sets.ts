import type { HeartbeatOptions } from '../../src/types.js';

/**
 * One heartbeat configuration per feature, each with its limits far beyond a test's length, so
 * that a test can run the same scenario under every option (invisibility, differential cases).
 * A new option gets an entry here.
 */
export const EVERY_OPTION: Record<string, HeartbeatOptions> = {
  defaults: {},
  'pings only': { pingIntervalMs: 60_000 },
  readerIdleMs: { readerIdleMs: 60_000 },
  'writerIdleMs + allIdleMs': { writerIdleMs: 60_000, allIdleMs: 60_000 },
  trackWrites: { trackWrites: true },
  closeOnIdle: { allIdleMs: 60_000, closeOnIdle: true },
  firstMessageMs: { firstMessageMs: 60_000 },
  'maxLifetimeMs + lifetimeJitter': { maxLifetimeMs: 60_000, lifetimeJitter: 0.5 },
  'maxBufferedBytes + drainTimeoutMs': { maxBufferedBytes: 1 << 20, drainTimeoutMs: 60_000 },
  'keepaliveMs + keepaliveMessage': { keepaliveMs: 60_000, keepaliveMessage: 'keepalive' },
  // A tracker that answers as RedisPresence does (a promise), so a socket is joined and left on the way.
  'presence + memberOf': {
    presence: { join: () => Promise.resolve(true), leave: () => Promise.resolve(true) },
    memberOf: () => 'member',
  },
};

/** `options` for a heartbeat on one client socket: presence tracks a server's connections only. */
export function onClient(options: HeartbeatOptions): HeartbeatOptions {
  const { presence: _presence, memberOf: _memberOf, ...rest } = options;
  return rest;
}
