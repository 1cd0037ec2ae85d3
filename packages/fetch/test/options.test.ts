import { ManualClock, sharedWheel, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues, type OptionKind } from '../../../tests/helpers/bad-options.js';
import { captureWarnings } from '../../../tests/helpers/process-warnings.js';
import { DEFAULTS, IDEMPOTENT_METHODS, resolveOptions } from '../src/options.js';

describe('options', () => {
  describe('resolveOptions', () => {
    it('fills in the documented defaults', () => {
      const resolved = resolveOptions({}, undefined, '');
      expect(resolved).toMatchObject({
        totalMs: Infinity,
        headersMs: Infinity,
        bodyIdleMs: Infinity,
        uploadIdleMs: Infinity,
        deadlineHeader: undefined,
        retry: undefined,
        budgetMs: Infinity,
        untimed: true,
      });
      expect(resolved.wheel).toBe(sharedWheel());
      expect(DEFAULTS.retryDefaults.methods).toBe(IDEMPOTENT_METHODS);
    });

    it('takes the event limits and isProgress, inherits them per request, and scans only when a limit is set', () => {
      const isProgress = (): boolean => true;
      const base = resolveOptions({ firstEventMs: 100, isProgress }, undefined, '');
      expect(base).toMatchObject({
        firstEventMs: 100,
        eventIdleMs: Infinity,
        isProgress,
        watchEvents: true,
        untimed: false,
      });
      expect(resolveOptions({ eventIdleMs: 50 }, base, 'timeouts.')).toMatchObject({
        firstEventMs: 100,
        eventIdleMs: 50,
        isProgress,
      });
      expect(resolveOptions({ firstEventMs: 0 }, base, 'timeouts.')).toMatchObject({
        watchEvents: false,
        untimed: true,
      });
      expect(resolveOptions({ isProgress }, undefined, '')).toMatchObject({ watchEvents: false, untimed: true });
    });

    it('takes deadlineHeader lower case, inherits it per request, and false switches it off', () => {
      const base = resolveOptions({ deadlineHeader: 'Connect-Timeout-Ms', uploadIdleMs: 500 }, undefined, '');
      expect(base).toMatchObject({ deadlineHeader: 'connect-timeout-ms', uploadIdleMs: 500, untimed: false });
      expect(resolveOptions({}, base, 'timeouts.')).toMatchObject({ deadlineHeader: 'connect-timeout-ms' });
      expect(resolveOptions({ deadlineHeader: false, uploadIdleMs: 0 }, base, 'timeouts.')).toMatchObject({
        deadlineHeader: undefined,
        uploadIdleMs: Infinity,
      });
    });

    it('fills a retry object from the retry defaults, and a number is the limit', () => {
      const fromObject = resolveOptions({ retry: {} }, undefined, '').retry!;
      expect(fromObject).toMatchObject({ limit: 2, backoffMs: 100, backoffFactor: 2, budgetMs: Infinity });
      expect([...fromObject.methods]).toEqual(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
      expect(resolveOptions({ retry: 4 }, undefined, '').retry!.limit).toBe(4);
      expect(resolveOptions({ retry: 0 }, undefined, '').retry).toBeUndefined();
    });

    it.each([
      [
        { totalMs: -1 },
        RangeError,
        '@tickwheel/fetch: totalMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
      ],
      [
        { headersMs: Number.NaN },
        RangeError,
        'headersMs must be a number of ms >= 0 (0 or Infinity: no limit), got NaN',
      ],
      [{ totalMs: '5' }, TypeError, 'totalMs must be a number of ms >= 0 (0 or Infinity: no limit), got "5"'],
      [{ totalMs: 2 ** 60 }, RangeError, 'totalMs must be at most 9007199254740992, got 1152921504606847000'],
      [
        { totalMs: 100, headersMs: 101 },
        RangeError,
        '@tickwheel/fetch: headersMs must not exceed totalMs (100), got 101',
      ],
      [
        { timeout: 5 },
        TypeError,
        '@tickwheel/fetch: unknown option timeout; known options: connectMs, totalMs, headersMs, bodyIdleMs, uploadIdleMs, firstEventMs, eventIdleMs, isProgress, reserveMs, minBudgetMs, retry, wheel, deadlineHeader',
      ],
      [
        { uploadIdleMs: -1 },
        RangeError,
        '@tickwheel/fetch: uploadIdleMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
      ],
      [
        { deadlineHeader: 'connect timeout' },
        TypeError,
        '@tickwheel/fetch: deadlineHeader must be an HTTP header name (such as connect-timeout-ms) or false (off), got "connect timeout"',
      ],
      [{ deadlineHeader: '' }, TypeError, 'deadlineHeader must be an HTTP header name'],
      [
        { deadlineHeader: 5 },
        TypeError,
        'deadlineHeader must be an HTTP header name (such as connect-timeout-ms) or false (off), got 5',
      ],
      [{ wheel: {} }, TypeError, '@tickwheel/fetch: wheel must be a TimingWheel from @tickwheel/core, got {}'],
      [{ retry: 'yes' }, TypeError, 'retry must be an object or a number (0: no retries), got "yes"'],
      [{ retry: { limit: 1.5 } }, RangeError, 'retry.limit must be an integer >= 0, got 1.5'],
      [{ retry: -1 }, RangeError, '@tickwheel/fetch: retry.limit must be an integer >= 0, got -1'],
      [{ retry: 1e6 }, RangeError, 'retry.limit must be at most 1000, got 1000000'],
      [{ retry: { backoffFactor: 0.5 } }, RangeError, 'retry.backoffFactor must be a finite number >= 1, got 0.5'],
      [{ retry: { budgetMs: -5 } }, RangeError, 'retry.budgetMs must be a number of ms >= 0 (0 or Infinity: no limit)'],
      [{ retry: { methods: 'GET' } }, TypeError, 'retry.methods must be an array of method names, got "GET"'],
      [{ retry: { onRetry: 1 } }, TypeError, 'retry.onRetry must be a function, got 1'],
      [{ connectMs: -1 }, RangeError, 'connectMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1'],
      [
        { connectMs: 200, totalMs: 100 },
        RangeError,
        '@tickwheel/fetch: connectMs must not exceed totalMs (100), got 200',
      ],
      [{ reserveMs: -1 }, RangeError, '@tickwheel/fetch: reserveMs must be a finite number of ms >= 0, got -1'],
      [{ minBudgetMs: 'x' }, TypeError, '@tickwheel/fetch: minBudgetMs must be a finite number of ms'],
      [{ retry: { statusCodes: 503 } }, TypeError, 'retry.statusCodes must be an array of HTTP status codes, got 503'],
      [{ retry: { statusCodes: [503, 99] } }, RangeError, 'retry.statusCodes[1] must be an integer >= 100, got 99'],
      [{ retry: { afterStatusCodes: [600] } }, RangeError, 'retry.afterStatusCodes[0] must be at most 599, got 600'],
      [{ retry: { maxRetryAfter: -1 } }, RangeError, 'retry.maxRetryAfter must be a number of ms >= 0'],
      [{ retry: { backoffLimit: 'no' } }, TypeError, 'retry.backoffLimit must be a number of ms'],
      [
        { retry: { jitter: 'full' } },
        TypeError,
        'retry.jitter must be a boolean or a function (delayMs) => delayMs, got "full"',
      ],
      [{ retry: { retryOnNetworkError: 1 } }, TypeError, 'retry.retryOnNetworkError must be a boolean, got 1'],
      [{ retry: { statuscodes: [503] } }, TypeError, 'unknown option retry.statuscodes'],
      [
        { retry: { retries: 1 } },
        TypeError,
        'unknown option retry.retries; known options: limit, budgetMs, backoffMs, backoffFactor, backoffLimit, jitter, methods, statusCodes, afterStatusCodes, maxRetryAfter, retryOnNetworkError, onRetry',
      ],
    ])('rejects %j with a clear message', (options, type, message) => {
      expect(() => resolveOptions(options as never, undefined, '')).toThrow(type);
      expect(() => resolveOptions(options as never, undefined, '')).toThrow(message);
    });

    describe('the shared table of bad inputs', () => {
      const options: Record<string, OptionKind> = {
        totalMs: 'limitMs',
        headersMs: 'limitMs',
        bodyIdleMs: 'limitMs',
        uploadIdleMs: 'limitMs',
        firstEventMs: 'limitMs',
        eventIdleMs: 'limitMs',
        isProgress: 'function',
        'retry.limit': 'integer',
        'retry.budgetMs': 'limitMs',
        'retry.backoffMs': 'durationMs',
        'retry.onRetry': 'function',
      };
      itRejectsBadValues('@tickwheel/fetch', options, (path, value) => {
        const [outer, inner] = path.split('.');
        const given = inner === undefined ? { [outer]: value } : { [outer]: { [inner]: value } };
        return resolveOptions(given, undefined, '');
      });

      it('rejects an unknown key, at the top and inside retry', () => {
        expectUnknownKey(
          () => resolveOptions({ timeoutMs: 5 } as never, undefined, ''),
          '@tickwheel/fetch',
          'timeoutMs',
        );
        expectUnknownKey(
          () => resolveOptions({ retry: { limitMs: 5 } } as never, undefined, ''),
          '@tickwheel/fetch',
          'retry.limitMs',
        );
      });

      it('takes 0 and Infinity as "off" for every limit', () => {
        for (const off of [0, Infinity]) {
          const resolved = resolveOptions(
            { totalMs: off, headersMs: off, bodyIdleMs: off, retry: { budgetMs: off } },
            undefined,
            '',
          );
          expect(resolved).toMatchObject({
            totalMs: Infinity,
            headersMs: Infinity,
            bodyIdleMs: Infinity,
            budgetMs: Infinity,
          });
        }
      });
    });

    it('throws a TypeError for options that are not an object', () => {
      expect(() => resolveOptions(null as never, undefined, '')).toThrow(
        '@tickwheel/fetch: options must be an object, got null',
      );
    });

    describe('per request', () => {
      const base = resolveOptions(
        { totalMs: 1_000, headersMs: 200, retry: { limit: 3, budgetMs: 5_000 } },
        undefined,
        '',
      );

      it('keeps what the request leaves out and prefixes error messages with timeouts.', () => {
        const merged = resolveOptions({ headersMs: 100, retry: { limit: 1 } }, base, 'timeouts.');
        expect(merged).toMatchObject({ totalMs: 1_000, headersMs: 100, budgetMs: 5_000 });
        expect(merged.retry!.limit).toBe(1);
        expect(() => resolveOptions({ totalMs: -2 }, base, 'timeouts.')).toThrow(
          '@tickwheel/fetch: timeouts.totalMs must be a number of ms >= 0 (0 or Infinity: no limit), got -2',
        );
      });

      it('checks headersMs against the inherited totalMs', () => {
        expect(() => resolveOptions({ headersMs: 2_000 }, base, 'timeouts.')).toThrow(
          '@tickwheel/fetch: timeouts.headersMs must not exceed totalMs (1000), got 2000',
        );
      });

      it('switches limits and retries off with 0', () => {
        const off = resolveOptions({ totalMs: 0, headersMs: 0, retry: 0 }, base, 'timeouts.');
        expect(off).toMatchObject({ totalMs: Infinity, headersMs: Infinity, retry: undefined, untimed: false });
      });

      it('still switches limits and retries off with the deprecated false, warning once', async () => {
        const { result: off, warnings } = await captureWarnings(() => {
          const first = resolveOptions({ totalMs: false, headersMs: false, retry: false }, base, 'timeouts.');
          resolveOptions({ totalMs: false }, base, 'timeouts.');
          return first;
        });
        expect(warnings.filter((w) => w.name === 'DeprecationWarning').length).toBeLessThanOrEqual(1);
        expect(off).toMatchObject({
          totalMs: Infinity,
          headersMs: Infinity,
          retry: undefined,
          budgetMs: Infinity,
          untimed: true,
        });
      });

      it('uses the wheel given per request', () => {
        const wheel = new TimingWheel({ clock: new ManualClock() });
        expect(resolveOptions({ wheel }, base, 'timeouts.').wheel).toBe(wheel);
        expect(resolveOptions({}, resolveOptions({ wheel }, undefined, ''), 'timeouts.').wheel).toBe(wheel);
      });
    });
  });
});
