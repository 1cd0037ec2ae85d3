/**
 * Payload encoding: JSON that must come back equal to what was given, checked before it is stored.
 *
 * A payload is stored as JSON, so it must come back equal to what was given. Rather than store a
 * different value than the caller meant (`JSON.stringify` drops `undefined`, turns `NaN` into
 * `null` and a Date into a string), {@link encodePayload} runs it through core's one JSON check,
 * the one `TimerSet` snapshots use, and throws a TypeError naming the path of the first part that
 * would not survive (`payload.items[2].at`).
 */
import { copyJson } from '@tickwheel/core/internal';
import { kit } from './options.js';

/**
 * Validates a payload and returns its JSON, or `''` for `undefined` (no payload; JSON text is
 * never empty, so the two cannot be confused).
 *
 * @throws TypeError naming the path of the first part that would not survive a JSON round trip
 */
export function encodePayload(payload: unknown, name = 'payload'): string {
  if (payload === undefined) return '';
  const checked = copyJson(payload, name, (path, why) => {
    throw new TypeError(`${kit.pkg}: ${path} ${why}`);
  });
  return JSON.stringify(checked);
}

/** The inverse of {@link encodePayload}. */
export function decodePayload<P>(text: string | null | undefined): P | undefined {
  return text === '' || text === null || text === undefined ? undefined : (JSON.parse(text) as P);
}
