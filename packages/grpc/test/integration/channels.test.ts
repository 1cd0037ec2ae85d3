import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import * as grpc from '@grpc/grpc-js';
import { CORE_CAPTURE_CONTEXT_CHANNEL, type ContextCarrier } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deadlineInterceptor,
  GRPC_DEADLINE_CHANNEL,
  GRPC_HANDLER_ABORT_CHANNEL,
  serverDeadlineInterceptor,
  type GrpcDeadlineMessage,
  type GrpcHandlerAbortMessage,
} from '../../src/index.js';
import { echoImplementation, newLog, unary, type Running } from '../helpers/echo.js';
import { loopbackPerTest } from '../helpers/loopback.js';

const store = new AsyncLocalStorage<string>();
const cleanups: Array<() => unknown> = [];

function listen<T extends { context: unknown }>(name: string): Array<{ message: T; context: unknown }> {
  const seen: Array<{ message: T; context: unknown }> = [];
  const listener = (message: unknown) => seen.push({ message: message as T, context: (message as T).context });
  diagnosticsChannel.subscribe(name, listener);
  cleanups.push(() => diagnosticsChannel.unsubscribe(name, listener));
  return seen;
}

/** A capture-context subscriber, as the OpenTelemetry bridge is: it stores the caller's store value. */
function captureStore(): void {
  const capture = (carrier: unknown) => {
    (carrier as ContextCarrier).context = store.getStore();
  };
  diagnosticsChannel.subscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture);
  cleanups.push(() => diagnosticsChannel.unsubscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture));
}

const loopback = loopbackPerTest();

function server(interceptors: grpc.ServerInterceptor[] = []): Promise<Running> {
  return loopback.server(interceptors);
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('channels, published by the interceptors on real grpc-js', () => {
  it("publishes a client call past its deadline, with the caller's context", { timeout: 10_000 }, async () => {
    const deadlines = listen<GrpcDeadlineMessage>(GRPC_DEADLINE_CHANNEL);
    captureStore();
    const running = await server();
    const client = await loopback.client(running.address, [
      deadlineInterceptor({ overrides: { '/tickwheel.test.Echo/Unary': 100 } }),
    ]);
    const { err } = await store.run('call 1', () => unary(client, { text: 'x', delayMs: 2_000 }));
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(
      deadlines.map(({ message, context }) => [message.side, message.path, message.limit, message.propagated, context]),
    ).toEqual([['client', '/tickwheel.test.Echo/Unary', 'method', false, 'call 1']]);
    // The configured limit, exactly (not the float difference of two clock readings).
    expect(deadlines[0].message.budgetMs).toBe(100);
    expect(deadlines[0].message.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(deadlines[0].message.elapsedMs).toBeLessThan(1_000);
  });

  it('publishes a client call refused because its budget was already spent', { timeout: 10_000 }, async () => {
    const deadlines = listen<GrpcDeadlineMessage>(GRPC_DEADLINE_CHANNEL);
    const running = await server();
    const client = await loopback.client(running.address, [deadlineInterceptor()]);
    const { err } = await unary(client, { text: 'x', delayMs: 0 }, { deadline: Date.now() - 1 });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(deadlines.map(({ message }) => message)).toEqual([
      {
        side: 'client',
        path: '/tickwheel.test.Echo/Unary',
        limit: 'explicit',
        budgetMs: 0,
        elapsedMs: 0,
        propagated: false,
        budget: {
          limit: 'callOptions.deadline',
          inherited: false,
          source: undefined,
          budgetMs: 0,
          spentBeforeMs: 0,
          elapsedMs: 0,
          lateMs: 0,
        },
      },
    ]);
  });

  it("publishes a server cap, and the handler's abort", { timeout: 10_000 }, async () => {
    const deadlines = listen<GrpcDeadlineMessage>(GRPC_DEADLINE_CHANNEL);
    const aborts = listen<GrpcHandlerAbortMessage>(GRPC_HANDLER_ABORT_CHANNEL);
    const running = await server([serverDeadlineInterceptor({ maxTimeoutMs: 100 })]);
    const client = await loopback.client(running.address);
    const { err } = await unary(client, { text: 'x', delayMs: 2_000 });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(deadlines.map(({ message }) => [message.side, message.limit, message.budgetMs, message.propagated])).toEqual(
      [['server', 'max', 100, false]],
    );
    expect(deadlines[0].message.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(aborts.map(({ message }) => [message.path, message.reason])).toEqual([
      ['/tickwheel.test.Echo/Unary', 'deadline'],
    ]);
  });

  it("publishes a handler aborted by the client's cancel", { timeout: 10_000 }, async () => {
    const aborts = listen<GrpcHandlerAbortMessage>(GRPC_HANDLER_ABORT_CHANNEL);
    const deadlines = listen<GrpcDeadlineMessage>(GRPC_DEADLINE_CHANNEL);
    const log = newLog();
    const running = await loopback.server(
      [serverDeadlineInterceptor({ defaultTimeoutMs: 5_000 })],
      echoImplementation(log),
    );
    const client = await loopback.client(running.address);
    const started = new Promise<void>((resolve) => log.onStart.push(resolve));
    const call = client.Unary({ text: 'x', delayMs: 2_000 }, {}, () => {});
    await started;
    call.cancel();
    const until = Date.now() + 5_000;
    while (aborts.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(aborts.map(({ message }) => message.reason)).toEqual(['client-cancelled']);
    expect(deadlines).toEqual([]);
  });
});
