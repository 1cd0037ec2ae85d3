import type * as grpc from '@grpc/grpc-js';
import { beforeAll, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import { ourServerDeadline, serverDeadline, unary, type Running } from '../helpers/echo.js';
import { loopbackPerFile, loopbackPerTest } from '../helpers/loopback.js';

// The same limits on the process-wide shared wheel and the system clock, with small timeouts
// and generous upper bounds (the machine is shared): never early, never badly late.

let server: Running;
const shared = loopbackPerFile();
const clients = loopbackPerTest();

beforeAll(async () => {
  server = await shared.server([
    serverDeadlineInterceptor({ overrides: { '/tickwheel.test.Echo/ServerStream': { defaultTimeoutMs: 60 } } }),
  ]);
});

describe('real-clock', () => {
  it('ends a client call at its timeout, not before', async () => {
    const client = await clients.client(server.address, [deadlineInterceptor({ timeoutMs: 50 })]);
    const { err, ms } = await unary(client, { text: 'x', delayMs: -1 });
    // The client's limit, or, when this busy machine delays the client's timer, the server's copy
    // of the same deadline (sent as grpc-timeout, answered with grpc-js's text), which can never fire earlier.
    expect(err?.details).toMatch(
      /^Deadline exceeded( after 50 ms \(default limit\) on \/tickwheel\.test\.Echo\/Unary; timeoutMs of 50 ms: \d+ ms in this call)?$/,
    );
    expect(ms).toBeGreaterThanOrEqual(50);
    expect(ms).toBeLessThan(50 + 500);
  });

  it('ends a server call at the server default, not before', async () => {
    const plain = await clients.client(server.address);
    const started = performance.now();
    const stream = plain.ServerStream({ text: 's', delayMs: -1, count: 1 });
    const err = await new Promise<grpc.ServiceError>((resolve) => {
      stream.on('error', resolve);
      stream.on('data', () => undefined);
    });
    const ms = performance.now() - started;
    expect(serverDeadline(err)).toEqual(ourServerDeadline('default', 60, '/tickwheel.test.Echo/ServerStream'));
    expect(ms).toBeGreaterThanOrEqual(59);
    expect(ms).toBeLessThan(60 + 500);
  });

  it('never times out fast calls', async () => {
    const client = await clients.client(server.address, [deadlineInterceptor({ timeoutMs: 2_000 })]);
    // A few at a time: 500 calls at once on a busy 2-core machine are not fast calls.
    let next = 0;
    const errors: string[] = [];
    const worker = async (): Promise<void> => {
      while (next < 500) {
        const i = next++;
        const { err } = await unary(client, { text: String(i), delayMs: 0 });
        if (err !== null) errors.push(`${i}: ${err.message}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(errors).toEqual([]);
  });
});
