/**
 * The one table of bad option values every package's options test runs (issue 15: one option kit).
 * Test code only; depends on nothing but vitest.
 */
import { expect, it } from 'vitest';

/** The kinds of option the kit checks, as `optionKit()` names them. */
export type OptionKind = 'limitMs' | 'durationMs' | 'integer' | 'function' | 'boolean';

/** A bad value, how it shows in a message, and the error it must raise. */
export interface BadValue {
  readonly label: string;
  readonly value: unknown;
  readonly error: typeof TypeError | typeof RangeError;
}

const WRONG_TYPE: readonly BadValue[] = [
  { label: '"5"', value: '5', error: TypeError },
  { label: 'null', value: null, error: TypeError },
  { label: '{}', value: {}, error: TypeError },
];
const BAD_NUMBERS: readonly BadValue[] = [
  { label: '-1', value: -1, error: RangeError },
  { label: 'NaN', value: Number.NaN, error: RangeError },
  { label: '-Infinity', value: -Infinity, error: RangeError },
  { label: String(2 ** 60), value: 2 ** 60, error: RangeError },
];
const INFINITY: BadValue = { label: 'Infinity', value: Infinity, error: RangeError };

/** The bad values of an option of `kind`: wrong type, negative, NaN, Infinity where not allowed, huge. */
export function badValues(kind: OptionKind): readonly BadValue[] {
  switch (kind) {
    case 'limitMs': // 0 and Infinity are "off", so both are allowed
      return [...WRONG_TYPE, { label: 'true', value: true, error: TypeError }, ...BAD_NUMBERS];
    case 'durationMs':
    case 'integer':
      return [...WRONG_TYPE, ...BAD_NUMBERS, INFINITY, ...(kind === 'integer' ? [integerBad] : [])];
    case 'function':
      return [...WRONG_TYPE, { label: '1', value: 1, error: TypeError }];
    case 'boolean':
      return [...WRONG_TYPE, { label: '1', value: 1, error: TypeError }];
  }
}
const integerBad: BadValue = { label: '1.5', value: 1.5, error: RangeError };

/**
 * Asserts that `run` throws `bad.error` with the kit's short message:
 * `<pkg>: <path> must …, got <label>` on one line, without an object dump.
 */
export function expectRejected(run: () => unknown, pkg: string, path: string, bad: BadValue): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(bad.error);
  const message = (thrown as Error).message;
  expect(message.startsWith(`${pkg}: ${path} must `), message).toBe(true);
  expect(message.endsWith(`, got ${bad.label}`), message).toBe(true);
  expect(message.length, message).toBeLessThan(200);
}

/**
 * The table itself: for each option path, one test per bad value of its kind, each handing the
 * value to `run(path, value)` and expecting the kit's error.
 */
export function itRejectsBadValues(
  pkg: string,
  options: Readonly<Record<string, OptionKind>>,
  run: (path: string, value: unknown) => unknown,
): void {
  for (const [path, kind] of Object.entries(options)) {
    for (const bad of badValues(kind)) {
      it(`rejects ${path} = ${bad.label} with a ${bad.error.name}`, () => {
        expectRejected(() => run(path, bad.value), pkg, path, bad);
      });
    }
  }
}

/** Asserts that `run` throws the kit's TypeError for an unknown option `path`. */
export function expectUnknownKey(run: () => unknown, pkg: string, path: string): void {
  expect(run).toThrow(TypeError);
  expect(run).toThrow(new RegExp(`^${escape(pkg)}: unknown option ${escape(path)}; known options: `));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
