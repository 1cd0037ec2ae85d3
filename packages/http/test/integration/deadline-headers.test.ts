// serverTimeouts on node:http: the caller's deadline headers, shortening only, capped by maxTimeoutMs.
import { currentDeadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import type { ServerTimeoutsOptions } from '../../src/index.js';
import { get, loopback } from '../helpers/loopback.js';
import { timedServer } from '../helpers/timed-server.js';

const net = loopback();

/** The deadline the handler sees for one request with `headers`. */
async function budgetFor(
  options: Omit<ServerTimeoutsOptions, 'wheel'>,
  headers: Record<string, string>,
): Promise<string> {
  const t = await timedServer(
    net,
    (_req, res) => res.end(`budget=${currentDeadline()?.remaining() ?? 'none'}`),
    options,
  );
  const client = await net.connect(t.port);
  client.write(get('/', headers));
  const got = await client.waitFor(/budget=\S+$/);
  return /budget=(\S+)$/.exec(got)![1];
}

describe("the caller's deadline headers", () => {
  it('shorten the deadline', async () => {
    expect(await budgetFor({ defaultTimeoutMs: 5_000 }, { 'grpc-timeout': '200m' })).toBe('200');
    expect(await budgetFor({ defaultTimeoutMs: 5_000 }, { 'connect-timeout-ms': '300' })).toBe('300');
    expect(await budgetFor({ defaultTimeoutMs: 5_000 }, { 'x-envoy-expected-rq-timeout-ms': '400' })).toBe('400');
  });

  it('never lengthen it', async () => {
    expect(await budgetFor({ defaultTimeoutMs: 5_000 }, { 'connect-timeout-ms': '60000' })).toBe('5000');
    expect(await budgetFor({ defaultTimeoutMs: 5_000 }, { 'grpc-timeout': '99999999H' })).toBe('5000');
  });

  it('set the deadline when the server has none, capped by maxTimeoutMs', async () => {
    expect(await budgetFor({}, { 'grpc-timeout': '2S' })).toBe('2000');
    expect(await budgetFor({ maxTimeoutMs: 10_000 }, { 'grpc-timeout': '99999999H' })).toBe('10000');
    expect(await budgetFor({ maxTimeoutMs: 10_000 }, { 'connect-timeout-ms': '99999999999999' })).toBe('10000');
  });

  it('are ignored when malformed, never a crash', async () => {
    for (const value of ['soon', '-1', '1e9', '', '12.5', '١٢٣']) {
      expect(await budgetFor({ defaultTimeoutMs: 700 }, { 'connect-timeout-ms': value })).toBe('700');
    }
    expect(await budgetFor({ defaultTimeoutMs: 700 }, { 'grpc-timeout': '123456789S' })).toBe('700');
  });

  it('are read only as listed in deadlineHeaders', async () => {
    expect(await budgetFor({ defaultTimeoutMs: 700, deadlineHeaders: [] }, { 'grpc-timeout': '1m' })).toBe('700');
    expect(await budgetFor({ defaultTimeoutMs: 700, deadlineHeaders: ['x-budget'] }, { 'x-budget': '70' })).toBe('70');
  });

  it('answer at once when the budget is already spent', async () => {
    const t = await timedServer(net, () => {}, { defaultTimeoutMs: 1_000 });
    const client = await net.connect(t.port);
    client.write(get('/', { 'grpc-timeout': '0m' }));
    await t.arrived();
    t.clock.advance(0);
    expect(await client.whenClosed()).toMatch(/^HTTP\/1\.1 503 /);
  });

  it('cap timeoutFor too: maxTimeoutMs caps everything', async () => {
    expect(await budgetFor({ timeoutFor: () => 600_000, maxTimeoutMs: 30_000 }, {})).toBe('30000');
  });
});
