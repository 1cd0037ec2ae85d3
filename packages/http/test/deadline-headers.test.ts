import { describe, expect, it } from 'vitest';
import { callerLimitFromRaw } from '../src/deadline-headers.js';
import { DEFAULTS } from '../src/options.js';

const names = DEFAULTS.deadlineHeaders;

/** The request's rawHeaders for `headers` (an array: the header sent once per value), then the limit read from them. */
function callerLimitMs(headers: Record<string, string | string[]>, list: readonly string[]): number {
  const raw = Object.entries(headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).flatMap((one) => [name, one]),
  );
  return callerLimitFromRaw(raw, list);
}

describe('callerLimitFromRaw', () => {
  it("reads grpc-timeout in gRPC's format, every unit", () => {
    expect(callerLimitMs({ 'grpc-timeout': '2H' }, names)).toBe(7_200_000);
    expect(callerLimitMs({ 'grpc-timeout': '3M' }, names)).toBe(180_000);
    expect(callerLimitMs({ 'grpc-timeout': '4S' }, names)).toBe(4_000);
    expect(callerLimitMs({ 'grpc-timeout': '150m' }, names)).toBe(150);
    expect(callerLimitMs({ 'grpc-timeout': '2500u' }, names)).toBe(2.5);
    expect(callerLimitMs({ 'grpc-timeout': '7000000n' }, names)).toBe(7);
    expect(callerLimitMs({ 'grpc-timeout': '99999999H' }, names)).toBe(99_999_999 * 3_600_000);
  });

  it('reads connect-timeout-ms and x-envoy-expected-rq-timeout-ms as whole ms', () => {
    expect(callerLimitMs({ 'connect-timeout-ms': '1500' }, names)).toBe(1_500);
    expect(callerLimitMs({ 'x-envoy-expected-rq-timeout-ms': '0' }, names)).toBe(0);
  });

  it('takes the first header of the list that is present and valid', () => {
    const headers = { 'grpc-timeout': '1S', 'connect-timeout-ms': '300', 'x-envoy-expected-rq-timeout-ms': '5' };
    expect(callerLimitMs(headers, names)).toBe(300);
    expect(callerLimitMs({ ...headers, 'connect-timeout-ms': 'soon' }, names)).toBe(1_000);
    expect(callerLimitMs(headers, ['x-envoy-expected-rq-timeout-ms'])).toBe(5);
    expect(callerLimitMs(headers, [])).toBe(Infinity);
  });

  // grpc-js ignores a grpc-timeout it cannot parse (server-interceptors.ts); so do we, for every header.
  it.each([
    ['grpc-timeout', '100'],
    ['grpc-timeout', '123456789S'],
    ['grpc-timeout', '-5S'],
    ['grpc-timeout', '1.5S'],
    ['grpc-timeout', '5s'],
    ['grpc-timeout', ' 5S'],
    ['grpc-timeout', ''],
    ['connect-timeout-ms', '-1'],
    ['connect-timeout-ms', '1e3'],
    ['connect-timeout-ms', '0x10'],
    ['connect-timeout-ms', '12.5'],
    ['connect-timeout-ms', '9999999999999999999999'],
    ['connect-timeout-ms', '100, 200'],
  ])('ignores %s: %j', (name, value) => {
    expect(callerLimitMs({ [name]: value }, names)).toBe(Infinity);
  });

  it('ignores a header sent twice', () => {
    expect(callerLimitMs({ 'connect-timeout-ms': ['1', '2'] }, names)).toBe(Infinity);
    expect(callerLimitMs({ 'connect-timeout-ms': ['1', '2'], 'grpc-timeout': '3S' }, names)).toBe(3_000);
  });

  it('matches header names in any case, as they come on the wire', () => {
    expect(callerLimitFromRaw(['Host', '127.0.0.1', 'Connect-Timeout-Ms', '250'], names)).toBe(250);
    expect(callerLimitFromRaw(['Connect-Timeout-Ms', '250', 'connect-timeout-ms', '300'], names)).toBe(Infinity);
    expect(callerLimitFromRaw(['GRPC-TIMEOUT', '20m'], names)).toBe(20);
  });
});
