/**
 * Where a deadline's time went, on real grpc-js calls over loopback: the client's
 * DEADLINE_EXCEEDED error carries `budget` (and its details say the same after our own text), the
 * server's expiry keeps grpc-js's text on the wire and reports `budget` on its channel, and a
 * handler's fetch names the incoming call's deadline as `'grpc'`.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import * as grpc from '@grpc/grpc-js';
import { withDeadline, type TimeoutBudget } from '@tickwheel/core';
import { TimeoutError, withTimeouts } from '@tickwheel/fetch';
import { afterEach, describe, expect, it } from 'vitest';
import { GRPC_DEADLINE_CHANNEL, type GrpcDeadlineMessage } from '../../src/channels.js';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import { unary, type EchoReply, type EchoRequest } from '../helpers/echo.js';
import { loopbackPerTest } from '../helpers/loopback.js';

const loopback = loopbackPerTest();
const PATH = '/tickwheel.test.Echo/Unary';

/** An HTTP server that never answers, closed after each test. */
const silent: Array<{ server: Server; held: ServerResponse[] }> = [];
afterEach(async () => {
  for (const { server, held } of silent.splice(0)) {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
async function silentServer(): Promise<string> {
  const held: ServerResponse[] = [];
  const server = createServer((_req, res) => held.push(res));
  silent.push({ server, held });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** A server whose Unary handler runs `handle` and never answers by itself. */
async function serverRunning(handle: () => void, interceptors: grpc.ServerInterceptor[]) {
  return loopback.server(interceptors, {
    Unary(_call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, _callback: grpc.sendUnaryData<EchoReply>) {
      handle();
    },
  });
}

/** Request metadata with a `grpc-timeout` header, as a caller's proxy forwards it. */
function grpcTimeout(value: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('grpc-timeout', value);
  return metadata;
}

function budgetOf(error: unknown): TimeoutBudget | undefined {
  return (error as { budget?: TimeoutBudget }).budget;
}

describe('budget', () => {
  it("the client's DEADLINE_EXCEEDED carries its own limit's budget, and its details add it to ours", async () => {
    const server = await serverRunning(() => undefined, []);
    const client = await loopback.client(server.address, [deadlineInterceptor({ timeoutMs: 150 })]);
    const { err } = await unary(client, { text: 'x' });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(budgetOf(err)).toMatchObject({ limit: 'timeoutMs', inherited: false, source: undefined, budgetMs: 150 });
    expect(budgetOf(err)!.elapsedMs).toBeGreaterThanOrEqual(150);
    expect(err?.details).toMatch(
      new RegExp(
        `^Deadline exceeded after 150 ms \\(default limit\\) on ${PATH}; timeoutMs of 150 ms: \\d+ ms in this call`,
      ),
    );
  });

  it("an ambient withDeadline's source, whole budget and time spent before the call reach the client's error", async () => {
    const server = await serverRunning(() => undefined, []);
    const client = await loopback.client(server.address, [deadlineInterceptor({ timeoutMs: 10_000 })]);
    const started = performance.now();
    const { err } = await withDeadline(400, async () => {
      // Spend part of the budget before the call.
      await new Promise((resolve) => setTimeout(resolve, 150));
      return unary(client, { text: 'x' });
    });
    const budget = budgetOf(err)!;
    expect(budget).toMatchObject({ limit: 'deadline', inherited: true, source: 'withDeadline', budgetMs: 400 });
    expect(budget.spentBeforeMs).toBeGreaterThanOrEqual(149);
    expect(budget.spentBeforeMs + budget.elapsedMs).toBeGreaterThanOrEqual(399);
    expect(budget.spentBeforeMs + budget.elapsedMs).toBeLessThanOrEqual(performance.now() - started + 1);
    expect(err?.details).toMatch(
      /; the deadline of 400 ms from withDeadline: \d+ ms spent before this call, \d+ ms in it/,
    );
  });

  it("the server's expiry keeps grpc-js's text on the wire and reports the client's deadline as 'grpc' on its channel", async () => {
    const messages: GrpcDeadlineMessage[] = [];
    const listener = (message: unknown): void => void messages.push(message as GrpcDeadlineMessage);
    subscribe(GRPC_DEADLINE_CHANNEL, listener);
    try {
      const server = await serverRunning(() => undefined, [serverDeadlineInterceptor()]);
      const client = await loopback.client(server.address);
      // The header alone, without a client timer of grpc-js's that would end the call first.
      const { err } = await unary(client, { text: 'x' }, {}, grpcTimeout('200m'));
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(err?.details).toBe('Deadline exceeded');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const serverSide = messages.find((message) => message.side === 'server');
      expect(serverSide?.budget).toMatchObject({ limit: 'deadline', inherited: true, source: 'grpc' });
      expect(serverSide!.budget.budgetMs).toBeLessThanOrEqual(200);
      expect(serverSide!.budget.elapsedMs).toBeGreaterThanOrEqual(serverSide!.budget.budgetMs - 1);
    } finally {
      unsubscribe(GRPC_DEADLINE_CHANNEL, listener);
    }
  });

  it("a handler's fetch names the incoming call's deadline: source 'grpc', gRPC handler -> fetch", async () => {
    const url = await silentServer();
    const timedFetch = withTimeouts(fetch, { totalMs: 10_000 });
    let fetched: Promise<unknown> | undefined;
    const server = await serverRunning(() => {
      fetched = timedFetch(url).then(
        () => undefined,
        (error: unknown) => error,
      );
    }, [serverDeadlineInterceptor()]);
    const client = await loopback.client(server.address);
    const { err } = await unary(client, { text: 'x' }, {}, grpcTimeout('300m'));
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const error = await fetched;
    expect(error).toBeInstanceOf(TimeoutError);
    const budget = (error as TimeoutError).budget!;
    expect(budget).toMatchObject({ limit: 'deadline', inherited: true, source: 'grpc' });
    expect(budget.budgetMs).toBeLessThanOrEqual(300);
    expect(budget.budgetMs).toBeGreaterThan(200);
    expect((error as TimeoutError).message).toMatch(/the deadline of \d+ ms from grpc: \d+ ms spent before this call/);
  });
});
