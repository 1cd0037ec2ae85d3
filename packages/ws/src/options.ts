import { describeValue, isTimingWheel, requireMs, sharedWheel, type TimingWheel } from '@tickwheel/core';
import type { HeartbeatOptions } from './types.js';

/**
 * The defaults, in one place. `pongTimeoutMs` has none of its own: it defaults to
 * `min(DEFAULT_PONG_TIMEOUT_MS, pingIntervalMs)` so that a short interval alone is valid, and
 * `pingSlackMs` to `pingIntervalMs / DEFAULT_PING_SLACK_DIVISOR`.
 */
export const DEFAULTS = {
  /** The ws README's heartbeat interval. */
  pingIntervalMs: 30_000,
  readerIdleMs: 0,
  writerIdleMs: 0,
  allIdleMs: 0,
  closeOnIdle: false,
  idleCloseCode: 1000,
  idleCloseReason: 'idle timeout',
  /** 1001 "going away": the endpoint gives up on the connection. */
  closeCode: 1001,
  closeReason: 'heartbeat timeout',
} as const;

/** See `DEFAULTS`. */
export const DEFAULT_PONG_TIMEOUT_MS = 10_000;
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
  readonly wheel: TimingWheel;
}

const KNOWN = new Set<string>([
  'pingIntervalMs', 'pongTimeoutMs', 'pingSlackMs', 'readerIdleMs', 'writerIdleMs', 'allIdleMs', 'closeOnIdle',
  'idleCloseCode', 'idleCloseReason', 'closeCode', 'closeReason', 'trackWrites', 'wheel',
]);

/**
 * Applies the defaults and validates everything, so that a bad option throws when the heartbeat
 * is created, never later as a silently wrong timer.
 *
 * @throws TypeError/RangeError naming the option and the offending value
 */
export function resolveOptions(options: HeartbeatOptions | undefined): ResolvedOptions {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`options must be an object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`unknown option ${describeValue(key)}; known options: ${[...KNOWN].join(', ')}`);
  }
  const pingIntervalMs = requireMs(options.pingIntervalMs ?? DEFAULTS.pingIntervalMs, 'pingIntervalMs');
  const readerIdleMs = requireMs(options.readerIdleMs ?? DEFAULTS.readerIdleMs, 'readerIdleMs');
  const writerIdleMs = requireMs(options.writerIdleMs ?? DEFAULTS.writerIdleMs, 'writerIdleMs');
  const allIdleMs = requireMs(options.allIdleMs ?? DEFAULTS.allIdleMs, 'allIdleMs');

  let pongTimeoutMs = 0;
  let pingSlackMs = 0;
  if (pingIntervalMs > 0) {
    pingSlackMs = requireMs(options.pingSlackMs ?? pingIntervalMs / DEFAULT_PING_SLACK_DIVISOR, 'pingSlackMs');
    if (pingSlackMs > pingIntervalMs) {
      throw new RangeError(`pingSlackMs must be <= pingIntervalMs (${pingIntervalMs}), got ${pingSlackMs}`);
    }
    pongTimeoutMs = requireMs(options.pongTimeoutMs ?? Math.min(DEFAULT_PONG_TIMEOUT_MS, pingIntervalMs), 'pongTimeoutMs');
    // 0 would declare every peer dead at the ping; beyond the interval a late pong and a lost one
    // can no longer be told apart within one round.
    if (pongTimeoutMs <= 0 || pongTimeoutMs > pingIntervalMs) {
      throw new RangeError(`pongTimeoutMs must be > 0 and <= pingIntervalMs (${pingIntervalMs}), got ${pongTimeoutMs}`);
    }
  } else {
    for (const name of ['pongTimeoutMs', 'pingSlackMs'] as const) {
      if (options[name] !== undefined) {
        throw new RangeError(`${name} needs pings: pingIntervalMs is 0 (pings disabled), got ${name} ${describeValue(options[name])}`);
      }
    }
  }
  if (pingIntervalMs === 0 && readerIdleMs === 0 && writerIdleMs === 0 && allIdleMs === 0) {
    throw new RangeError('pingIntervalMs, readerIdleMs, writerIdleMs and allIdleMs are all 0: the heartbeat would do nothing');
  }

  const needsWrites = writerIdleMs > 0 || allIdleMs > 0;
  const trackWrites = requireBoolean(options.trackWrites ?? needsWrites, 'trackWrites');
  if (needsWrites && !trackWrites) {
    throw new RangeError('trackWrites cannot be false while writerIdleMs or allIdleMs is enabled: writer idleness is measured from completed sends');
  }

  const wheel = options.wheel ?? sharedWheel();
  if (!isTimingWheel(wheel)) throw new TypeError(`wheel must be a TimingWheel, got ${describeValue(wheel)}`);
  if (wheel.isClosed) throw new RangeError('wheel is closed: pass an open TimingWheel');

  return {
    pingIntervalMs,
    pongTimeoutMs,
    pingSlackMs,
    readerIdleMs,
    writerIdleMs,
    allIdleMs,
    closeOnIdle: requireBoolean(options.closeOnIdle ?? DEFAULTS.closeOnIdle, 'closeOnIdle'),
    idleCloseCode: requireCloseCode(options.idleCloseCode ?? DEFAULTS.idleCloseCode, 'idleCloseCode'),
    idleCloseReason: requireCloseReason(options.idleCloseReason ?? DEFAULTS.idleCloseReason, 'idleCloseReason'),
    closeCode: requireCloseCode(options.closeCode ?? DEFAULTS.closeCode, 'closeCode'),
    closeReason: requireCloseReason(options.closeReason ?? DEFAULTS.closeReason, 'closeReason'),
    trackWrites,
    wheel,
  };
}

function requireBoolean(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean, got ${describeValue(value)}`);
  return value;
}

/** The codes an endpoint may send (RFC 6455 §7.4, as ws checks them): 1000-1014 except 1004-1006, and 3000-4999. */
function requireCloseCode(value: unknown, name: string): number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a WebSocket close code (a number), got ${describeValue(value)}`);
  const valid = Number.isInteger(value) && ((value >= 1000 && value <= 1014 && value !== 1004 && value !== 1005 && value !== 1006) || (value >= 3000 && value <= 4999));
  if (!valid) {
    throw new RangeError(`${name} must be a close code an endpoint may send: 1000-1014 except 1004-1006, or 3000-4999, got ${describeValue(value)}`);
  }
  return value;
}

function requireCloseReason(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string, got ${describeValue(value)}`);
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_CLOSE_REASON_BYTES) {
    throw new RangeError(`${name} must be at most ${MAX_CLOSE_REASON_BYTES} bytes of UTF-8, got ${bytes} bytes`);
  }
  return value;
}
