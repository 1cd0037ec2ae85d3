import { describe, expect, it } from 'vitest';
import { badValues, expectRejected, expectUnknownKey } from '../../../tests/helpers/bad-options.js';
import { captureWarnings } from '../../../tests/helpers/process-warnings.js';
import { describeValue, optionChecks, orDefault, requireFunction, requireMs } from '../src/kit/options-kit.js';

describe('options-kit', () => {
  const kit = optionChecks('@tickwheel/test');

  describe('#limitMs', () => {
    it('reads 0 and Infinity as no limit, and keeps any other limit', () => {
      expect(kit.limitMs(0, 'totalMs')).toBe(Infinity);
      expect(kit.limitMs(Infinity, 'totalMs')).toBe(Infinity);
      expect(kit.limitMs(2.5, 'totalMs')).toBe(2.5);
    });

    it('words the error as the issue asks: package, path, value', () => {
      expect(() => kit.limitMs(-1, 'retry.budgetMs')).toThrow(
        new RangeError('@tickwheel/test: retry.budgetMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1'),
      );
    });

    for (const bad of badValues('limitMs')) {
      it(`rejects ${bad.label} with a ${bad.error.name}`, () => {
        expectRejected(() => kit.limitMs(bad.value, 'totalMs'), '@tickwheel/test', 'totalMs', bad);
      });
    }

    it('reads the deprecated false as no limit, warning once per package', async () => {
      const once = optionChecks('@tickwheel/warn-once');
      const { warnings } = await captureWarnings(() => {
        expect(once.limitMs(false, 'totalMs')).toBe(Infinity);
        expect(once.limitMs(false, 'headersMs')).toBe(Infinity);
      });
      const ours = warnings.filter((w) => w.message.startsWith('@tickwheel/warn-once:'));
      expect(ours.map((w) => [w.name, (w as { code?: string }).code])).toEqual([
        ['DeprecationWarning', 'TICKWHEEL_FALSE_LIMIT'],
      ]);
      expect(ours[0].message).toBe(
        '@tickwheel/warn-once: totalMs: false is deprecated as "no limit" and stops working in 1.0; pass 0 (or Infinity)',
      );
    });
  });

  describe('#durationMs', () => {
    it('keeps values in range and names the bound that was crossed', () => {
      expect(kit.durationMs(0, 'pingSlackMs')).toBe(0);
      expect(() => kit.durationMs(5, 'leaseMs', 10)).toThrow(
        '@tickwheel/test: leaseMs must be a finite number of ms >= 10, got 5',
      );
      expect(() => kit.durationMs(11, 'leaseMs', 0, 10)).toThrow('@tickwheel/test: leaseMs must be at most 10, got 11');
    });

    for (const bad of badValues('durationMs')) {
      it(`rejects ${bad.label} with a ${bad.error.name}`, () => {
        expectRejected(() => kit.durationMs(bad.value, 'leaseMs'), '@tickwheel/test', 'leaseMs', bad);
      });
    }
  });

  describe('#integer', () => {
    it('keeps integers in range', () => {
      expect(kit.integer(3, 'retry.limit', 0, 10)).toBe(3);
      expect(() => kit.integer(-1, 'retry.limit', 0)).toThrow(
        new RangeError('@tickwheel/test: retry.limit must be an integer >= 0, got -1'),
      );
    });

    for (const bad of badValues('integer')) {
      it(`rejects ${bad.label} with a ${bad.error.name}`, () => {
        expectRejected(() => kit.integer(bad.value, 'shards', 0, 1024), '@tickwheel/test', 'shards', bad);
      });
    }
  });

  describe('#function, #boolean', () => {
    it('keeps the right type', () => {
      const fn = (): void => undefined;
      expect(kit.function(fn, 'onRetry')).toBe(fn);
      expect(kit.boolean(false, 'closeOnIdle')).toBe(false);
    });

    for (const bad of badValues('function')) {
      it(`rejects ${bad.label} as a function`, () => {
        expectRejected(() => kit.function(bad.value, 'onRetry'), '@tickwheel/test', 'onRetry', bad);
      });
    }
    for (const bad of badValues('boolean')) {
      it(`rejects ${bad.label} as a boolean`, () => {
        expectRejected(() => kit.boolean(bad.value, 'closeOnIdle'), '@tickwheel/test', 'closeOnIdle', bad);
      });
    }
  });

  describe('#oneOf', () => {
    it('keeps an allowed value; a wrong one of the right type is a RangeError, of another type a TypeError', () => {
      expect(kit.oneOf('keep', 'ifExists', ['replace', 'keep'])).toBe('keep');
      expect(() => kit.oneOf('merge', 'ifExists', ['replace', 'keep'])).toThrow(
        new RangeError('@tickwheel/test: ifExists must be "replace" or "keep", got "merge"'),
      );
      expect(() => kit.oneOf(1, 'ifExists', ['replace', 'keep'])).toThrow(TypeError);
    });
  });

  describe('#object', () => {
    it('reads undefined as {} and refuses unknown keys, naming the path', () => {
      expect(kit.object(undefined, 'options', ['a'])).toEqual({});
      expectUnknownKey(() => kit.object({ b: 1 }, 'options', ['a']), '@tickwheel/test', 'b');
      expectUnknownKey(() => kit.object({ b: 1 }, 'retry', ['a']), '@tickwheel/test', 'retry.b');
      expect(() => kit.object([], 'retry', ['a'])).toThrow(
        new TypeError('@tickwheel/test: retry must be an object, got []'),
      );
    });

    it('never dumps a large object into a message', () => {
      const big = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}`, i]));
      expect(() => kit.function(big, 'onRetry')).toThrow(
        '@tickwheel/test: onRetry must be a function, got a plain object',
      );
    });
  });

  describe('orDefault', () => {
    it('takes the default only for undefined, so null reaches the check', () => {
      expect(orDefault(undefined, 5)).toBe(5);
      expect(orDefault<unknown>(null, 5)).toBeNull();
      expect(orDefault(0, 5)).toBe(0);
    });
  });

  // Core's own unprefixed checks (0.1's validate.ts, folded into the kit).
  describe('requireMs', () => {
    it('names the option and the value', () => {
      expect(() => requireMs(-5, 'delayMs')).toThrow(new RangeError('delayMs must be a finite number >= 0, got -5'));
      expect(() => requireMs('5', 'timeoutMs')).toThrow(TypeError);
      expect(() => requireMs(3, 'pongTimeoutMs', 10)).toThrow(/pongTimeoutMs must be a finite number >= 10, got 3/);
      expect(requireMs(0, 'x')).toBe(0);
    });
  });

  describe('requireFunction', () => {
    it('rejects non-functions', () => {
      expect(() => requireFunction({}, 'onExpire')).toThrow(/onExpire must be a function, got \{\}/);
    });
  });

  describe('describeValue', () => {
    it('renders values readably', () => {
      expect(describeValue('a')).toBe('"a"');
      expect(describeValue(10n)).toBe('10n');
      expect(describeValue(function named() {})).toBe('function named');
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(describeValue(cyclic)).toBe('a plain object');
      expect(describeValue({})).toBe('{}');
      expect(describeValue([])).toBe('[]');
      expect(describeValue([1, 2, 3])).toBe('[1,2,3]');
      expect(describeValue({ entity: 1 })).toBe('{"entity":1}');
      expect(describeValue(new Array(100).fill(1))).toBe('an array of length 100');
      expect(describeValue(null)).toBe('null');
    });

    it('names an object by its type, never by its contents (private fields of a wheel)', () => {
      class Secretive {
        readonly token = 'hunter2';
      }
      expect(describeValue(new Secretive())).toBe('an object (Secretive)');
      expect(describeValue(new Map([['k', 'v']]))).toBe('an object (Map)');
      expect(describeValue(Object.create(Object.create(null)))).toBe('an object (Object)');
    });
  });
});
