import diagnosticsChannel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeat, WS_TERMINATE_CHANNEL, type WsTerminateMessage } from '../../src/index.js';
import { closeAll, connect, next, onCleanup, startServer } from '../helpers/servers.js';

function listen(): WsTerminateMessage[] {
  const seen: WsTerminateMessage[] = [];
  const listener = (message: unknown) => seen.push(message as WsTerminateMessage);
  diagnosticsChannel.subscribe(WS_TERMINATE_CHANNEL, listener);
  onCleanup(() => {
    diagnosticsChannel.unsubscribe(WS_TERMINATE_CHANNEL, listener);
  });
  return seen;
}

afterEach(closeAll);

describe('channels, published by heartbeat() on real ws sockets', () => {
  it('publishes the termination of a client that never answers a ping', { timeout: 10_000 }, async () => {
    const seen = listen();
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 50, pongTimeoutMs: 50 });
    onCleanup(() => beat.stop());
    const dead = next<{ socket: unknown; waitedMs: number }>(beat, 'dead');
    // autoPong false: the client reads the ping and stays silent, as a hung peer would.
    await connect(url, { autoPong: false });
    const healthy = await connect(url);
    const event = await dead;
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ reason: 'pong-timeout', limitMs: 50, side: 'server', quietMs: event.waitedMs });
    expect(seen[0].socket).toBe(event.socket);
    expect(seen[0].quietMs).toBeGreaterThanOrEqual(50);
    expect(healthy.readyState).toBe(healthy.OPEN);
  });

  it('publishes a client-side heartbeat closing an idle connection', { timeout: 10_000 }, async () => {
    const seen = listen();
    const { url } = await startServer();
    const client = await connect(url);
    const beat = heartbeat(client, { pingIntervalMs: 0, readerIdleMs: 50, closeOnIdle: true });
    onCleanup(() => beat.stop());
    await next(client, 'close');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ reason: 'idle-reader', limitMs: 50, side: 'client', socket: client });
    expect(seen[0].quietMs).toBeGreaterThanOrEqual(50);
  });

  it('publishes nothing for idle events that only report', { timeout: 10_000 }, async () => {
    const seen = listen();
    const { url } = await startServer();
    const client = await connect(url);
    const beat = heartbeat(client, { pingIntervalMs: 0, readerIdleMs: 30 });
    onCleanup(() => beat.stop());
    await next(beat, 'idle');
    expect(seen).toEqual([]);
  });
});
