/**
 * Retry policy of a timer: how many deliveries it gets and how long it waits between them.
 *
 * Semantics follow BullMQ's `attempts` and `backoff` (src/classes/backoffs.ts there), with units
 * in the option names: `fixed` waits `delayMs` after every failed attempt, `exponential` waits
 * `delayMs * 2^(attempts - 1)`; `jitter` (0 to 1) takes a random part of that wait away, so a
 * wait lies in `[wait * (1 - jitter), wait]`. The wait counts on the Redis server's clock: the
 * retry is put back into the due set at server now + wait.
 *
 * A policy travels with the timer, encoded in its record, so whichever worker sees it fail
 * applies the policy it was scheduled with: `''` (retry at once), `f<ms>` or `e<ms>`, optionally
 * followed by `j<jitter in thousandths>`.
 */
import { optionKit } from '@tickwheel/core/internal';

const kit = optionKit('@tickwheel/redis');

/** How long a timer waits before its next attempt after a failed one. */
export interface BackoffOptions {
  /** `'fixed'`: `delayMs` every time; `'exponential'`: `delayMs * 2^(attempts - 1)`. */
  type: 'fixed' | 'exponential';
  /** The (first) wait in ms. */
  delayMs: number;
  /** 0 to 1: the share of the wait that is random (BullMQ's `jitter`). Default 0. */
  jitter?: number;
}

/** The longest wait any backoff yields: a day beyond it is surely a bug, and it keeps the math finite. */
const MAX_BACKOFF_MS = 2 ** 31 - 1;

/**
 * Validates a backoff given as options or as a number (fixed ms, as BullMQ accepts) and encodes it.
 *
 * @throws TypeError/RangeError naming `name` and the bad value
 */
export function encodeBackoff(value: unknown, name: string): string {
  if (value === undefined || value === 0) return '';
  if (typeof value === 'number') return `f${Math.ceil(kit.durationMs(value, name, 0, MAX_BACKOFF_MS))}`;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw kit.typeError(name, 'must be a number of ms or { type, delayMs, jitter? }', value);
  }
  const { type, delayMs, jitter } = kit.object(value, name, ['type', 'delayMs', 'jitter']);
  kit.oneOf(type, `${name}.type`, ['fixed', 'exponential']);
  const ms = Math.ceil(kit.durationMs(delayMs, `${name}.delayMs`, 0, MAX_BACKOFF_MS));
  let encoded = `${type === 'fixed' ? 'f' : 'e'}${ms}`;
  if (jitter !== undefined) {
    if (kit.number(jitter, `${name}.jitter`, 0, 1) > 0) encoded += `j${Math.round((jitter as number) * 1000)}`;
  }
  return encoded;
}

/**
 * The wait before the next attempt, after `attempts` deliveries have failed.
 *
 * @param encoded - a policy from {@link encodeBackoff}
 * @param random - a number in [0, 1), `Math.random()` unless a test pins it
 */
export function backoffDelayMs(encoded: string, attempts: number, random = Math.random()): number {
  const match = /^([fe])(\d+)(?:j(\d+))?$/.exec(encoded);
  if (match === null) return 0;
  const base = Number(match[2]);
  const wait = Math.min(MAX_BACKOFF_MS, match[1] === 'f' ? base : Math.round(base * 2 ** Math.max(0, attempts - 1)));
  const jitter = match[3] === undefined ? 0 : Number(match[3]) / 1000;
  return jitter === 0 ? wait : Math.floor(wait * (1 - jitter) + random * wait * jitter);
}

/**
 * Validates `attempts`: an integer from 1 to 1e9, or no limit (stored as 0): `0` or `Infinity`,
 * the "off" of every tickwheel limit.
 */
export function encodeAttempts(value: unknown, name: string): number {
  if (value === 0 || value === Number.POSITIVE_INFINITY) return 0;
  return kit.integer(value, name, 1, 1_000_000_000);
}
