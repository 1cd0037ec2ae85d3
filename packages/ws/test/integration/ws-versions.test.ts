/**
 * The ws internals the heartbeat reads (src/ws-internals.ts), on each ws version we test: the
 * oldest we claim (8.0.0, `ws-8.0`), the first with `autoPong` (8.16.0, `ws-8.16`) and the newest
 * (the workspace's `ws`). A release that moves a field fails here, naming it, before users meet
 * its fallback. Real servers and clients on 127.0.0.1.
 */
import { createRequire } from 'node:module';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type * as Ws from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import {
  answersPings,
  frameReaderOf,
  handshakeRequestOf,
  internalsOf,
  isClientSide,
  socketOfReader,
  transportOf,
} from '../../src/ws-internals.js';
import { waitFor } from '../helpers/servers.js';

const require = createRequire(import.meta.url);
type WsModule = typeof Ws;

/** Each version: its module, and whether it has the `autoPong` option. */
const VERSIONS: Array<{ name: string; ws: WsModule; autoPongOption: boolean }> = [
  { name: 'ws-8.0', ws: require('ws-8.0') as WsModule, autoPongOption: false },
  { name: 'ws-8.16', ws: require('ws-8.16') as WsModule, autoPongOption: true },
  { name: 'ws', ws: require('ws') as WsModule, autoPongOption: true },
];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server of `ws` on 127.0.0.1, a client of it (with `options`), and the server's socket of that client. */
async function pair(ws: WsModule, options: Ws.ClientOptions = {}) {
  // ws 8.0 exports the classes as `Server` and the module itself; later ones by these names too.
  const Server = ws.WebSocketServer ?? (ws as unknown as { Server: typeof Ws.WebSocketServer }).Server;
  const Client = ws.WebSocket ?? (ws as unknown as typeof Ws.WebSocket);
  const wss = new Server({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  cleanups.push(async () => {
    for (const socket of wss.clients) socket.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  const accepted = new Promise<Ws.WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new Client(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, options);
  cleanups.push(async () => {
    if (client.readyState === client.CLOSED) return;
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.terminate();
    await closed;
  });
  const request = handshakeRequestOf(client);
  await new Promise<void>((resolve, reject) => {
    client.once('open', resolve);
    client.once('error', reject);
  });
  return { wss, client, server: await accepted, request };
}

describe.each(VERSIONS)('ws internals on $name', ({ ws, autoPongOption }) => {
  it('finds every field the heartbeat reads, on both sides', async () => {
    const { client, server, request } = await pair(ws);
    expect(request, '_req while connecting').toBeDefined();
    const expected = {
      _socket: true,
      '_handle.writeQueueSize': true,
      _isServer: true,
      _autoPong: autoPongOption && '_autoPong' in server,
      _closeTimeout: '_closeTimeout' in server,
      _receiver: true,
    };
    expect(internalsOf(server)).toEqual(expected);
    expect(internalsOf(client)).toEqual({ ...expected, _closeTimeout: '_closeTimeout' in client });
    expect(transportOf(server)).toBeInstanceOf(net.Socket);
    expect(isClientSide(server, true)).toBe(false);
    expect(isClientSide(client, false)).toBe(true);
    const reader = frameReaderOf(server)!;
    expect(socketOfReader(reader)).toBe(server);
  });

  it('tells whether ws answers pings by itself, as the version does', async () => {
    const answering = await pair(ws);
    expect(answersPings(answering.client)).toBe(true);
    expect(answersPings(answering.server)).toBe(true);
    const silent = await pair(ws, { autoPong: false });
    // Before 8.16 there is no such option: ws always answers.
    expect(answersPings(silent.client)).toBe(!autoPongOption);
    let pongs = 0;
    silent.server.on('pong', () => pongs++);
    silent.server.ping();
    const gotPing = new Promise<void>((resolve) => silent.client.once('ping', () => resolve()));
    await gotPing;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pongs).toBe(autoPongOption ? 0 : 1);
  });

  it('runs a heartbeat that pings, hears the close from the frame reader, and lets go', async () => {
    const { wss, client, server } = await pair(ws);
    const closeListeners = server.listenerCount('close');
    const beat = heartbeat(wss as unknown as Ws.WebSocketServer, { pingIntervalMs: 500, pongTimeoutMs: 500 });
    cleanups.push(() => Promise.resolve(beat.stop()));
    expect(beat.size).toBe(1);
    expect(server.listenerCount('close')).toBe(closeListeners);
    await waitFor(() => (beat.state(server)?.rttMs ?? -1) >= 0, 10_000, 'a ping answered');
    client.close();
    await waitFor(() => beat.size === 0, 10_000, 'the record dropped at the close');
    expect(beat.stats().dead).toBe(0);
  });
});
