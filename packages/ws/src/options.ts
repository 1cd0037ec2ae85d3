/**
 * The defaults of heartbeat() and the resolution of its options with core's option kit.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import { sharedWheel, type TimingWheel } from '@tickwheel/core';
import { optionKit, orDefault } from '@tickwheel/core/internal';
import type { IncomingMessage } from 'node:http';
import type { HeartbeatOptions, PresenceTracker } from './types.js';

/**
 * The defaults, in one place. `pongTimeoutMs` has none of its own: it defaults to
 * `min(DEFAULT_PONG_TIMEOUT_MS, pingIntervalMs)` so that a short interval alone is valid, and
 * `pingSlackMs` to `pingIntervalMs / DEFAULT_PING_SLACK_DIVISOR`.
 */
export const DEFAULTS = Object.freeze({
  /** The ws README's heartbeat interval. */
  pingIntervalMs: 30_000,
  /** Off (this package's one "off" is Infinity; 0 given as an option means the same). */
  readerIdleMs: Infinity,
  writerIdleMs: Infinity,
  allIdleMs: Infinity,
  closeOnIdle: false,
  idleCloseCode: 1000,
  idleCloseReason: 'idle timeout',
  /** 1001 "going away": the endpoint gives up on the connection. */
  closeCode: 1001,
  closeReason: 'heartbeat timeout',
  keepaliveMs: Infinity,
  /** An empty text frame: the least a page's message handler can receive. */
  keepaliveMessage: '',
} as const);

const kit = optionKit('@tickwheel/ws');

/** See `DEFAULTS`. */
export const DEFAULT_PONG_TIMEOUT_MS = 10_000;
/** `drainTimeoutMs` when `maxBufferedBytes` is on. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
/** `pingSlackMs` defaults to `pingIntervalMs / DEFAULT_PING_SLACK_DIVISOR`. */
export const DEFAULT_PING_SLACK_DIVISOR = 32;

/** RFC 6455 §5.5: a control frame's payload is at most 125 bytes, two of which hold the code. */
const MAX_CLOSE_REASON_BYTES = 123;

/** Options with every default applied and every value checked. */
export interface ResolvedOptions {
  readonly pingIntervalMs: number;
  readonly pongTimeoutMs: number;
  readonly pingSlackMs: number;
  readonly readerIdleMs: number;
  readonly writerIdleMs: number;
  readonly allIdleMs: number;
  readonly closeOnIdle: boolean;
  readonly idleCloseCode: number;
  readonly idleCloseReason: string;
  readonly closeCode: number;
  readonly closeReason: string;
  readonly trackWrites: boolean;
  readonly firstMessageMs: number;
  readonly maxLifetimeMs: number;
  readonly lifetimeJitter: number;
  readonly maxBufferedBytes: number;
  readonly drainTimeoutMs: number;
  readonly wheel: TimingWheel;
  readonly keepaliveMs: number;
  readonly keepaliveMessage: string;
  /** The presence and its `memberOf`, both or neither. */
  readonly presence:
    { tracker: PresenceTracker; memberOf: (request: IncomingMessage) => string | undefined } | undefined;
}

const KNOWN: readonly string[] = [
  'pingIntervalMs',
  'pongTimeoutMs',
  'pingSlackMs',
  'readerIdleMs',
  'writerIdleMs',
  'allIdleMs',
  'closeOnIdle',
  'idleCloseCode',
  'idleCloseReason',
  'closeCode',
  'closeReason',
  'trackWrites',
  'firstMessageMs',
  'maxLifetimeMs',
  'lifetimeJitter',
  'maxBufferedBytes',
  'drainTimeoutMs',
  'wheel',
  'keepaliveMs',
  'keepaliveMessage',
  'presence',
  'memberOf',
];

/**
 * Applies the defaults and validates everything, so that a bad option throws when the heartbeat
 * is created, never later as a silently wrong timer.
 *
 * @throws TypeError/RangeError naming the option and the offending value
 */
export function resolveOptions(options: HeartbeatOptions | undefined): ResolvedOptions {
  if (options === null || (options !== undefined && typeof options !== 'object')) {
    throw kit.typeError('options', 'must be an object', options);
  }
  options = kit.object(options, 'options', KNOWN);
  const pingIntervalMs = limit(options.pingIntervalMs, DEFAULTS.pingIntervalMs, 'pingIntervalMs');
  const readerIdleMs = limit(options.readerIdleMs, DEFAULTS.readerIdleMs, 'readerIdleMs');
  const writerIdleMs = limit(options.writerIdleMs, DEFAULTS.writerIdleMs, 'writerIdleMs');
  const allIdleMs = limit(options.allIdleMs, DEFAULTS.allIdleMs, 'allIdleMs');

  let pongTimeoutMs = Infinity;
  let pingSlackMs = 0;
  if (pingIntervalMs < Infinity) {
    pingSlackMs = kit.durationMs(
      options.pingSlackMs === undefined ? pingIntervalMs / DEFAULT_PING_SLACK_DIVISOR : options.pingSlackMs,
      'pingSlackMs',
    );
    if (pingSlackMs > pingIntervalMs) {
      throw kit.rangeError('pingSlackMs', `must be <= pingIntervalMs (${pingIntervalMs})`, pingSlackMs);
    }
    pongTimeoutMs = kit.durationMs(
      options.pongTimeoutMs === undefined ? Math.min(DEFAULT_PONG_TIMEOUT_MS, pingIntervalMs) : options.pongTimeoutMs,
      'pongTimeoutMs',
    );
    // 0 would declare every peer dead at the ping; beyond the interval a late pong and a lost one
    // can no longer be told apart within one round.
    if (pongTimeoutMs <= 0 || pongTimeoutMs > pingIntervalMs) {
      throw kit.rangeError('pongTimeoutMs', `must be > 0 and <= pingIntervalMs (${pingIntervalMs})`, pongTimeoutMs);
    }
  } else {
    for (const name of ['pongTimeoutMs', 'pingSlackMs'] as const) {
      if (options[name] !== undefined) {
        throw kit.rangeError(name, 'needs pings, but pingIntervalMs is 0 (pings off)', options[name]);
      }
    }
  }
  const keepaliveMs = limit(options.keepaliveMs, DEFAULTS.keepaliveMs, 'keepaliveMs');
  const keepaliveMessage = orDefault(options.keepaliveMessage, DEFAULTS.keepaliveMessage);
  if (typeof keepaliveMessage !== 'string')
    throw kit.typeError('keepaliveMessage', 'must be a string', keepaliveMessage);
  if (keepaliveMs === Infinity && options.keepaliveMessage !== undefined) {
    throw kit.rangeError('keepaliveMessage', 'needs keepalives, but keepaliveMs is 0 (off)', keepaliveMessage);
  }
  const firstMessageMs = limit(options.firstMessageMs, Infinity, 'firstMessageMs');
  const maxLifetimeMs = limit(options.maxLifetimeMs, Infinity, 'maxLifetimeMs');
  const lifetimeJitter =
    options.lifetimeJitter === undefined ? 0 : kit.number(options.lifetimeJitter, 'lifetimeJitter', 0, 1);
  if (options.lifetimeJitter !== undefined && maxLifetimeMs === Infinity) {
    throw kit.rangeError('lifetimeJitter', 'needs maxLifetimeMs, which is off', options.lifetimeJitter);
  }
  const maxBufferedBytes =
    options.maxBufferedBytes === undefined || options.maxBufferedBytes === 0 || options.maxBufferedBytes === Infinity
      ? Infinity
      : kit.integer(options.maxBufferedBytes, 'maxBufferedBytes', 1);
  if (options.drainTimeoutMs !== undefined && maxBufferedBytes === Infinity) {
    throw kit.rangeError('drainTimeoutMs', 'needs maxBufferedBytes, which is off', options.drainTimeoutMs);
  }
  const drainTimeoutMs =
    maxBufferedBytes === Infinity
      ? Infinity
      : kit.durationMs(orDefault(options.drainTimeoutMs, DEFAULT_DRAIN_TIMEOUT_MS), 'drainTimeoutMs', 1);
  if (
    pingIntervalMs === Infinity &&
    readerIdleMs === Infinity &&
    writerIdleMs === Infinity &&
    allIdleMs === Infinity &&
    firstMessageMs === Infinity &&
    maxLifetimeMs === Infinity &&
    maxBufferedBytes === Infinity &&
    keepaliveMs === Infinity
  ) {
    throw new RangeError(
      '@tickwheel/ws: pingIntervalMs, every idle limit, every connection limit and keepaliveMs are all off: the heartbeat would do nothing',
    );
  }

  const needsWrites = writerIdleMs < Infinity || allIdleMs < Infinity || keepaliveMs < Infinity;
  const trackWrites = kit.boolean(options.trackWrites === undefined ? needsWrites : options.trackWrites, 'trackWrites');
  if (needsWrites && !trackWrites) {
    throw new RangeError(
      '@tickwheel/ws: trackWrites cannot be false while writerIdleMs, allIdleMs or keepaliveMs is on: writer idleness and keepalives are measured from the bytes written',
    );
  }

  const wheel = options.wheel === undefined ? sharedWheel() : kit.wheel(options.wheel, 'wheel');
  if (wheel.isClosed) throw new RangeError('@tickwheel/ws: wheel is closed: pass an open TimingWheel');

  return {
    presence: resolvePresence(options.presence, options.memberOf),
    pingIntervalMs,
    pongTimeoutMs,
    pingSlackMs,
    readerIdleMs,
    writerIdleMs,
    allIdleMs,
    closeOnIdle: kit.boolean(orDefault(options.closeOnIdle, DEFAULTS.closeOnIdle), 'closeOnIdle'),
    idleCloseCode: requireCloseCode(orDefault(options.idleCloseCode, DEFAULTS.idleCloseCode), 'idleCloseCode'),
    idleCloseReason: requireCloseReason(
      orDefault(options.idleCloseReason, DEFAULTS.idleCloseReason),
      'idleCloseReason',
    ),
    closeCode: requireCloseCode(orDefault(options.closeCode, DEFAULTS.closeCode), 'closeCode'),
    closeReason: requireCloseReason(orDefault(options.closeReason, DEFAULTS.closeReason), 'closeReason'),
    trackWrites,
    firstMessageMs,
    maxLifetimeMs,
    lifetimeJitter,
    maxBufferedBytes,
    drainTimeoutMs,
    wheel,
    keepaliveMs,
    keepaliveMessage,
  };
}

/** `presence` and `memberOf` come together: a tracker with `join` and `leave`, and a function. */
function resolvePresence(presence: unknown, memberOf: unknown): ResolvedOptions['presence'] {
  if (presence === undefined && memberOf === undefined) return undefined;
  if (
    presence === null ||
    typeof presence !== 'object' ||
    typeof (presence as PresenceTracker).join !== 'function' ||
    typeof (presence as PresenceTracker).leave !== 'function'
  )
    throw kit.typeError('presence', 'must be a presence with join() and leave() (a RedisPresence)', presence);
  if (memberOf === undefined) throw kit.typeError('memberOf', 'must be a function (presence needs it)', memberOf);
  return {
    tracker: presence as PresenceTracker,
    memberOf: kit.function<(request: IncomingMessage) => string | undefined>(memberOf, 'memberOf'),
  };
}

/** A limit in ms, or its default when left out; 0 (ws's own "off") and Infinity turn it off: Infinity inside. */
function limit(value: unknown, fallback: number, name: string): number {
  return value === undefined ? fallback : kit.limitMs(value, name);
}

/** The codes an endpoint may send (RFC 6455 §7.4, as ws checks them): 1000-1014 except 1004-1006, and 3000-4999. */
function requireCloseCode(value: unknown, name: string): number {
  if (typeof value !== 'number') throw kit.typeError(name, 'must be a WebSocket close code (a number)', value);
  const valid =
    Number.isInteger(value) &&
    ((value >= 1000 && value <= 1014 && value !== 1004 && value !== 1005 && value !== 1006) ||
      (value >= 3000 && value <= 4999));
  if (!valid) {
    throw kit.rangeError(
      name,
      'must be a close code an endpoint may send: 1000-1014 except 1004-1006, or 3000-4999',
      value,
    );
  }
  return value;
}

function requireCloseReason(value: unknown, name: string): string {
  if (typeof value !== 'string') throw kit.typeError(name, 'must be a string', value);
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_CLOSE_REASON_BYTES) {
    throw new RangeError(
      `${kit.pkg}: ${name} must be at most ${MAX_CLOSE_REASON_BYTES} bytes of UTF-8, got ${bytes} bytes`,
    );
  }
  return value;
}
