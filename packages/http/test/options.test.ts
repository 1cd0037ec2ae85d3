import http from 'node:http';
import { ManualClock, TimingWheel, sharedWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues } from '../../../tests/helpers/bad-options.js';
import { serverTimeouts } from '../src/index.js';
import { DEFAULTS, middlewarePlan, serverPlan } from '../src/options.js';

const PKG = '@tickwheel/http';

describe('serverTimeouts options', () => {
  it('turns every limit off by default, reads the three deadline headers and answers 503', () => {
    const plan = serverPlan(undefined);
    expect(plan).toMatchObject({
      limitMs: Infinity,
      maxLimitMs: Infinity,
      headersMs: Infinity,
      bodyIdleMs: Infinity,
      keepAliveMs: Infinity,
      timeoutStatus: 503,
      deadlineHeaders: ['connect-timeout-ms', 'grpc-timeout', 'x-envoy-expected-rq-timeout-ms'],
    });
    expect(plan.wheel).toBe(sharedWheel());
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
  });

  it('reads 0 and Infinity alike as off', () => {
    for (const off of [0, Infinity]) {
      expect(serverPlan({ defaultTimeoutMs: off, headersMs: off, bodyIdleMs: off, keepAliveMs: off })).toMatchObject({
        limitMs: Infinity,
        headersMs: Infinity,
        bodyIdleMs: Infinity,
        keepAliveMs: Infinity,
      });
    }
  });

  itRejectsBadValues(
    PKG,
    {
      defaultTimeoutMs: 'limitMs',
      maxTimeoutMs: 'limitMs',
      headersMs: 'limitMs',
      bodyIdleMs: 'limitMs',
      keepAliveMs: 'limitMs',
      timeoutFor: 'function',
    },
    (path, value) => serverPlan({ [path]: value }),
  );

  it('refuses unknown keys', () => {
    expectUnknownKey(() => serverPlan({ timeoutMs: 5 }), PKG, 'timeoutMs');
    expectUnknownKey(() => middlewarePlan({ defaultTimeoutMs: 5 }), PKG, 'defaultTimeoutMs');
  });

  it.each([
    [{ timeoutStatus: 200 }, RangeError, '@tickwheel/http: timeoutStatus must be an integer >= 400, got 200'],
    [{ timeoutStatus: 700 }, RangeError, '@tickwheel/http: timeoutStatus must be at most 599, got 700'],
    [{ timeoutStatus: '503' }, TypeError, '@tickwheel/http: timeoutStatus must be an integer >= 400, got "503"'],
    [{ deadlineHeaders: 'grpc-timeout' }, TypeError, '@tickwheel/http: deadlineHeaders must be an array'],
    [
      { deadlineHeaders: ['Grpc-Timeout'] },
      RangeError,
      '@tickwheel/http: deadlineHeaders[0] must be a lower-case header name, got "Grpc-Timeout"',
    ],
    [{ deadlineHeaders: [5] }, TypeError, '@tickwheel/http: deadlineHeaders[0] must be a string, got 5'],
    [{ wheel: {} }, TypeError, '@tickwheel/http: wheel must be a TimingWheel from @tickwheel/core, got {}'],
  ])('rejects %j', (options, type, message) => {
    expect(() => serverPlan(options)).toThrow(type);
    expect(() => serverPlan(options)).toThrow(message);
  });

  it('rejects a closed wheel', () => {
    const wheel = new TimingWheel({ clock: new ManualClock(0) });
    wheel.close();
    expect(() => serverPlan({ wheel })).toThrow('@tickwheel/http: wheel must be an open TimingWheel');
  });

  it('checks the server and refuses a second controller on one server', () => {
    expect(() => serverTimeouts({} as never)).toThrow(
      '@tickwheel/http: server must be a node:http, node:https or node:http2 server, got {}',
    );
    const server = http.createServer();
    const first = serverTimeouts(server);
    expect(() => serverTimeouts(server)).toThrow(/already has serverTimeouts attached/);
    first.stop();
    serverTimeouts(server).stop();
  });

  it('checks close() options', async () => {
    const timeouts = serverTimeouts(http.createServer());
    expect(() => timeouts.close({ graceMs: -1 })).toThrow(
      '@tickwheel/http: graceMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
    );
    expect(() => timeouts.close({ grace: 5 } as never)).toThrow(/unknown option close options.grace/);
    await timeouts.close({ graceMs: 0 });
  });
});

describe('the adapters options', () => {
  it('name the route option timeoutMs, and the path a route config gives', () => {
    expect(middlewarePlan({ timeoutMs: 600_000 }).limitMs).toBe(600_000);
    expect(() => middlewarePlan({ timeoutMs: -1 }, 'config.deadline')).toThrow(
      '@tickwheel/http: config.deadline.timeoutMs must be',
    );
  });
});
