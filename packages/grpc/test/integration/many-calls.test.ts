import * as grpc from '@grpc/grpc-js';
import { TimingWheel } from '@tickwheel/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import { unary, type EchoClient } from '../helpers/echo.js';
import { loopbackPerFile } from '../helpers/loopback.js';

// Real time, real sockets: 10,000 calls through both interceptors, each side on a private
// wheel so that its size counts this test's timers only.

const CALLS = 10_000;
const CONCURRENCY = 64;

let client: EchoClient;
const clientWheel = new TimingWheel();
const serverWheel = new TimingWheel();
const loopback = loopbackPerFile();

beforeAll(async () => {
  const server = await loopback.server([serverDeadlineInterceptor({ defaultTimeoutMs: 30_000, wheel: serverWheel })]);
  client = await loopback.client(server.address, [deadlineInterceptor({ timeoutMs: 30_000, wheel: clientWheel })]);
});
afterAll(() => {
  clientWheel.close();
  serverWheel.close();
});

async function untilEmpty(wheel: TimingWheel): Promise<number> {
  for (let i = 0; i < 200 && wheel.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return wheel.size;
}

describe('many-calls', () => {
  it(`leaves no timer on either wheel after ${CALLS.toLocaleString('en-US')} calls, some of them timing out`, async () => {
    let next = 0;
    let ok = 0;
    const timedOut: string[] = [];
    const failures: string[] = [];
    const worker = async (): Promise<void> => {
      while (next < CALLS) {
        const i = next++;
        // Every 100th call outlives a 20 ms deadline of its own; every other one is fast.
        const slow = i % 100 === 99;
        const { err } = await unary(
          client,
          { text: String(i), delayMs: slow ? 300 : 0 },
          slow ? { deadline: Date.now() + 20 } : {},
        );
        if (err === null) ok++;
        else if (slow && err.code === grpc.status.DEADLINE_EXCEEDED) timedOut.push(err.details);
        else failures.push(`${i}: ${err.code} ${err.details}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    expect(failures).toEqual([]);
    expect(ok).toBe(CALLS - CALLS / 100);
    expect(timedOut).toHaveLength(CALLS / 100);
    // Mostly the client's own limit; on a loaded machine the server's status (its copy of the same
    // deadline, from grpc-timeout) may arrive first, or the 20 ms may pass before the call starts
    // (then it never reaches the network and schedules no timer on either side).
    const spent = timedOut.filter(
      (details) =>
        details ===
        'Deadline exceeded before the call started (explicit limit, 0 ms left) on /tickwheel.test.Echo/Unary',
    ).length;
    const unexpected = timedOut.filter(
      (details) =>
        !/^Deadline exceeded( after \d+ ms \((explicit|propagated) limit\) on \/tickwheel\.test\.Echo\/Unary; .+| before the call started \(explicit limit, 0 ms left\) on \/tickwheel\.test\.Echo\/Unary; .+)?$/.test(
          details,
        ),
    );
    expect(unexpected).toEqual([]);
    expect(timedOut.some((details) => details.includes('(explicit limit)'))).toBe(true);
    expect(clientWheel.size).toBe(0);
    expect(clientWheel.stats().scheduled).toBe(CALLS - spent);
    // The server learns of the cancelled calls a moment later, over the wire.
    expect(await untilEmpty(serverWheel)).toBe(0);
    // One per server call: its ambient deadline's, which also reports the expiry to the call.
    // Every fast call reaches the server with time left; on a loaded machine a slow call's 20 ms
    // may be gone when it arrives (answered at once, nothing scheduled) or it may be cancelled
    // before the server sees it.
    const serverScheduled = serverWheel.stats().scheduled;
    expect(serverScheduled).toBeLessThanOrEqual(CALLS - spent);
    expect(serverScheduled).toBeGreaterThanOrEqual(CALLS - CALLS / 100);
  });
});
