import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import type { RetryOptions } from '../../src/types.js';
import { PYTHON } from '../global-setup.js';
import { echoClient, ready, unary, type EchoClient, type EchoReply, type EchoRequest } from '../helpers/echo.js';
import { loopbackPerTest } from '../helpers/loopback.js';

// Unary retries inside the deadline, against real servers on loopback: grpc-js servers that
// answer UNAVAILABLE, hang, or answer late, and Python's grpcio (gRPC's C core). The first block
// translates grpc-js's own retry tests (github:grpc/grpc-node, packages/grpc-js/test/test-retry.ts,
// 1.14.x, "Retries" > "Client with retries configured"), with our `retry` option in place of the
// service config's retryPolicy; each test keeps its title.

const loopback = loopbackPerTest();

/** What one server saw: each attempt's headers, and the time it arrived. */
interface Attempts {
  metadata: grpc.Metadata[];
  at: number[];
}

type Behaviour = (
  attempt: number,
  call: grpc.ServerUnaryCall<EchoRequest, EchoReply>,
  callback: grpc.sendUnaryData<EchoReply>,
) => void;

/** A grpc-js Echo server whose n-th call (1-based) is answered by `behaviour`. */
async function serve(behaviour: Behaviour, interceptors: grpc.ServerInterceptor[] = []) {
  const attempts: Attempts = { metadata: [], at: [] };
  const server = await loopback.server(interceptors, {
    Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      attempts.metadata.push(call.metadata);
      attempts.at.push(performance.now());
      behaviour(attempts.metadata.length, call, callback);
    },
  });
  return { attempts, address: server.address };
}

async function clientWith(address: string, retry: RetryOptions, timeoutMs = 10_000): Promise<EchoClient> {
  return loopback.client(address, [deadlineInterceptor({ timeoutMs, retry })]);
}

const ok = (call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>): void =>
  callback(null, { text: call.request.text, remainingMs: 0 });
const fail = (callback: grpc.sendUnaryData<EchoReply>, code: grpc.status, details: string, trailer?: grpc.Metadata) =>
  callback({ code, details, metadata: trailer });

describe('retry: translated from grpc-js test-retry.ts, "Client with retries configured"', () => {
  // The original's server: fails with `respond-with-status` until the attempt whose
  // grpc-previous-rpc-attempts equals `succeed-on-retry-attempt`.
  const original: Behaviour = (_attempt, call, callback) => {
    const succeedOn = call.metadata.get('succeed-on-retry-attempt');
    const previous = call.metadata.get('grpc-previous-rpc-attempts');
    if (succeedOn.length === 0 || (previous.length > 0 && previous[0] === succeedOn[0])) {
      ok(call, callback);
    } else {
      const code = call.metadata.get('respond-with-status')[0];
      fail(
        callback,
        code ? Number.parseInt(code as string) : grpc.status.UNKNOWN,
        `Failed on retry ${String(previous[0] ?? 0)}`,
      );
    }
  };
  // maxAttempts 3, initialBackoff 0.1s, maxBackoff 10s, backoffMultiplier 1.2, codes [14, RESOURCE_EXHAUSTED].
  const policy: RetryOptions = {
    limit: 2,
    statusCodes: [14, 'RESOURCE_EXHAUSTED'],
    backoff: { initialMs: 100, maxMs: 10_000, multiplier: 1.2 },
  };
  const withHeaders = (succeedOn: string, status: grpc.status) => {
    const metadata = new grpc.Metadata();
    metadata.set('succeed-on-retry-attempt', succeedOn);
    metadata.set('respond-with-status', String(status));
    return metadata;
  };

  it('Should be able to make a basic request', async () => {
    const { address } = await serve(original);
    const { err, res } = await unary(await clientWith(address, policy), { text: 'test value' });
    expect(err).toBeNull();
    expect(res?.text).toBe('test value');
  });

  it('Should succeed with few required attempts', async () => {
    const { address, attempts } = await serve(original);
    const client = await clientWith(address, policy);
    const { err, res } = await unary(
      client,
      { text: 'test value' },
      {},
      withHeaders('2', grpc.status.RESOURCE_EXHAUSTED),
    );
    expect(err).toBeNull();
    expect(res?.text).toBe('test value');
    expect(attempts.metadata.map((m) => m.get('grpc-previous-rpc-attempts')[0])).toEqual([undefined, '1', '2']);
  });

  it('Should fail with many required attempts', async () => {
    const { address } = await serve(original);
    const client = await clientWith(address, policy);
    const { err } = await unary(client, { text: 'test value' }, {}, withHeaders('4', grpc.status.RESOURCE_EXHAUSTED));
    expect(err?.details).toBe('Failed on retry 2');
  });

  it('Should fail with a fatal status code', async () => {
    const { address } = await serve(original);
    const client = await clientWith(address, policy);
    const { err } = await unary(client, { text: 'test value' }, {}, withHeaders('2', grpc.status.NOT_FOUND));
    expect(err?.details).toBe('Failed on retry 0');
  });

  it('Should not retry on custom error code', async () => {
    const { address, attempts } = await serve(original);
    const client = await clientWith(address, policy);
    const { err } = await unary(client, { text: 'test value' }, {}, withHeaders('2', 32 as grpc.status));
    expect(err?.details).toBe('Failed on retry 0');
    expect(attempts.metadata).toHaveLength(1);
  });
});

describe('retry: inside the deadline', () => {
  it('retries UNAVAILABLE answers until one succeeds, waiting the backoff between attempts', async () => {
    const { address, attempts } = await serve((n, call, callback) =>
      n <= 2 ? fail(callback, grpc.status.UNAVAILABLE, `down ${n}`) : ok(call, callback),
    );
    const client = await clientWith(address, { limit: 3, backoff: { initialMs: 50, multiplier: 2, jitter: 0 } });
    const { err, res } = await unary(client, { text: 'x' });
    expect(err).toBeNull();
    expect(res?.text).toBe('x');
    expect(attempts.at).toHaveLength(3);
    expect(attempts.at[1] - attempts.at[0]).toBeGreaterThanOrEqual(49);
    expect(attempts.at[2] - attempts.at[1]).toBeGreaterThanOrEqual(99);
  });

  it('ends a hung attempt at perAttemptMs and retries it; each attempt’s grpc-timeout is the smaller of perAttemptMs and what is left', async () => {
    const remaining: number[] = [];
    const { address, attempts } = await serve(
      (n, call, callback) => {
        remaining.push(call.getDeadline() === Infinity ? Infinity : Number(call.getDeadline()) - Date.now());
        if (n >= 2) ok(call, callback);
      },
      [serverDeadlineInterceptor()],
    );
    const client = await clientWith(
      address,
      { perAttemptMs: 150, statusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'], backoff: { initialMs: 10, jitter: 0 } },
      1_000,
    );
    const started = performance.now();
    const { err, res } = await unary(client, { text: 'x' });
    expect(err).toBeNull();
    expect(res?.text).toBe('x');
    expect(attempts.at).toHaveLength(2);
    expect(attempts.at[1] - started).toBeGreaterThanOrEqual(150 + 10);
    expect(remaining[0]).toBeLessThanOrEqual(150);
    expect(remaining[0]).toBeGreaterThan(100);
  });

  it('never retries an attempt that received response headers, and never outlives the deadline', async () => {
    const { address, attempts } = await serve((_n, call) => {
      call.sendMetadata(new grpc.Metadata());
    });
    const client = await clientWith(
      address,
      { perAttemptMs: 100, statusCodes: ['UNAVAILABLE', 'DEADLINE_EXCEEDED'], backoff: { initialMs: 10, jitter: 0 } },
      1_000,
    );
    const started = performance.now();
    const { err } = await unary(client, { text: 'x' });
    const ms = performance.now() - started;
    // The server ends the committed attempt at its grpc-timeout (100m); it is not retried.
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(attempts.at).toHaveLength(1);
    expect(ms).toBeGreaterThanOrEqual(99);
    expect(ms).toBeLessThan(1_000);
  });

  it('retries an attempt that would answer late, and never lets the late answer through', async () => {
    const { address, attempts } = await serve((n, _call, callback) =>
      setTimeout(() => callback(null, { text: `answer ${n}`, remainingMs: 0 }), n === 1 ? 300 : 0),
    );
    const client = await clientWith(address, { perAttemptMs: 100, statusCodes: ['DEADLINE_EXCEEDED'] });
    const { err, res } = await unary(client, { text: 'late' });
    expect(err).toBeNull();
    expect(res?.text).toBe('answer 2');
    expect(attempts.at).toHaveLength(2);
  });

  it('stops retrying when the next backoff would end past the deadline, with the last status', async () => {
    const { address, attempts } = await serve((n, _call, callback) =>
      fail(callback, grpc.status.UNAVAILABLE, `down ${n}`),
    );
    const client = await clientWith(
      address,
      { limit: 100, backoff: { initialMs: 600, multiplier: 1, jitter: 0 } },
      1_000,
    );
    const started = performance.now();
    const { err } = await unary(client, { text: 'x' });
    const ms = performance.now() - started;
    expect({ code: err?.code, details: err?.details }).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: `down ${attempts.at.length}`,
    });
    // Attempts near 0 and 600 ms; a third, at 1,200 ms, would start past the 1 s deadline, so the
    // call ends with the second attempt's status, before its deadline.
    expect(attempts.at).toHaveLength(2);
    expect(ms).toBeLessThan(1_000);
  });

  it('honours grpc-retry-pushback-ms: a delay, or no retry for a value that is not a non-negative integer', async () => {
    const pushback = (value: string) => {
      const trailer = new grpc.Metadata();
      trailer.set('grpc-retry-pushback-ms', value);
      return trailer;
    };
    const stop = await serve((n, _call, callback) =>
      fail(callback, grpc.status.UNAVAILABLE, `down ${n}`, pushback('-1')),
    );
    const { err } = await unary(await clientWith(stop.address, { limit: 3 }), { text: 'x' });
    expect(err?.details).toBe('down 1');
    expect(stop.attempts.at).toHaveLength(1);

    const wait = await serve((n, call, callback) =>
      n === 1 ? fail(callback, grpc.status.UNAVAILABLE, 'later', pushback('120')) : ok(call, callback),
    );
    const second = await unary(await clientWith(wait.address, { limit: 3, backoff: { initialMs: 1, jitter: 0 } }), {
      text: 'x',
    });
    expect(second.err).toBeNull();
    expect(wait.attempts.at[1] - wait.attempts.at[0]).toBeGreaterThanOrEqual(119);
  });

  it('ends a call cancelled during a backoff at once, with no further attempt', async () => {
    const { address, attempts } = await serve((n, _call, callback) =>
      fail(callback, grpc.status.UNAVAILABLE, `down ${n}`),
    );
    const client = await clientWith(address, { limit: 3, backoff: { initialMs: 5_000, jitter: 0 } });
    const outcome = new Promise<grpc.ServiceError | null>((resolve) => {
      const call = client.Unary({ text: 'x' }, {}, (err) => resolve(err));
      const check = (): void =>
        void (attempts.at.length > 0 ? setTimeout(() => call.cancel(), 20) : setTimeout(check, 5));
      check();
    });
    const err = await outcome;
    expect(err?.code).toBe(grpc.status.CANCELLED);
    expect(attempts.at).toHaveLength(1);
  });
});

describe('retry: against Python grpcio', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid);
    child = undefined;
  });

  async function pythonServer(mode: string): Promise<{ address: string; lines: string[] }> {
    const proc = spawn(PYTHON, [path.join(__dirname, '..', 'fixtures', 'python_server.py'), mode]);
    child = proc;
    const lines: string[] = [];
    const reader = createInterface({ input: proc.stdout });
    const port = await new Promise<string>((resolve, reject) => {
      proc.once('exit', (code) => reject(new Error(`python_server.py exited with ${code}`)));
      reader.once('line', resolve);
    });
    reader.on('line', (line) => lines.push(line));
    return { address: `127.0.0.1:${port}`, lines };
  }

  /**
   * The server's "call" lines once `count` have come (it prints each before it answers, but its
   * stdout can reach us after the answer does), or after 2 s with what has come.
   */
  async function callLines(lines: string[], count: number): Promise<string[]> {
    const calls = (): string[] => lines.filter((line) => line.startsWith('call '));
    for (let i = 0; i < 200 && calls().length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return calls();
  }

  it('retries a grpcio server’s UNAVAILABLE answers until it succeeds', async () => {
    const { address, lines } = await pythonServer('unavailable:2');
    const client = echoClient(address, [
      deadlineInterceptor({ timeoutMs: 5_000, retry: { limit: 3, backoff: { initialMs: 20 } } }),
    ]);
    await ready(client);
    const { err, res } = await unary(client, { text: 'py' });
    client.close();
    expect(err).toBeNull();
    expect(res?.text).toBe('py');
    expect(await callLines(lines, 3)).toHaveLength(3);
  });

  it('ends an attempt the grpcio server hangs on at perAttemptMs, and retries it', async () => {
    const { address, lines } = await pythonServer('hang:1');
    const client = echoClient(address, [
      deadlineInterceptor({ timeoutMs: 5_000, retry: { perAttemptMs: 200, statusCodes: ['DEADLINE_EXCEEDED'] } }),
    ]);
    await ready(client);
    const { err, res } = await unary(client, { text: 'py' });
    client.close();
    expect(err?.details ?? null).toBeNull();
    expect(res?.text).toBe('py');
    const calls = await callLines(lines, 2);
    expect(calls).toHaveLength(2);
    // The first attempt's grpc-timeout is perAttemptMs, not the call's 5 s.
    const leftMs = Number(calls[0].split(' ')[2]);
    expect(leftMs).toBeGreaterThan(100);
    expect(leftMs).toBeLessThanOrEqual(200);
  });
});
