import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket, type WebSocket as ServerSocket } from 'ws';
import { watch } from '../../src/browser/silence-watch.js';
import type { WatchableSocket } from '../../src/browser/types.js';
import { heartbeat } from '../../src/heartbeat.js';
import { PartitionProxy } from '../helpers/partition-proxy.js';
import { closeAll, connect, next, onCleanup, sleep, startServer, waitFor } from '../helpers/servers.js';

// keepaliveMs against real ws clients, and watch() from @tickwheel/ws/browser on Node's own
// WHATWG WebSocket: the global one on Node 22+, ws's (which has addEventListener too) on Node 20.

const KEEPALIVE_MS = 100;

afterEach(closeAll);

/** Arrival times (performance.now()) of the text messages a ws client receives, by content. */
function arrivals(client: WsWebSocket): Array<{ at: number; text: string }> {
  const seen: Array<{ at: number; text: string }> = [];
  client.on('message', (data: Buffer) => seen.push({ at: performance.now(), text: data.toString() }));
  return seen;
}

describe('heartbeat(wss, { keepaliveMs }) with ws clients', () => {
  it('sends keepaliveMessage about every keepaliveMs to a connection it sends nothing else', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { keepaliveMs: KEEPALIVE_MS, keepaliveMessage: 'ka' });
    onCleanup(() => beat.stop());
    const client = await connect(url);
    const seen = arrivals(client);
    await sleep(10 * KEEPALIVE_MS + KEEPALIVE_MS / 2);
    expect(seen.every((m) => m.text === 'ka')).toBe(true);
    expect(seen.length).toBeGreaterThanOrEqual(7);
    expect(seen.length).toBeLessThanOrEqual(11);
    // Arrival times jitter with both event loops; on average they are keepaliveMs apart.
    expect((seen[seen.length - 1].at - seen[0].at) / (seen.length - 1)).toBeGreaterThanOrEqual(KEEPALIVE_MS - 5);
    // One may be on its way.
    expect(beat.stats().keepalivesSent - seen.length).toBeGreaterThanOrEqual(0);
    expect(beat.stats().keepalivesSent - seen.length).toBeLessThanOrEqual(1);
  });

  it("sends none while the app's own messages flow, resumes when they stop, and never leaves the client 2 x keepaliveMs without a message", async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { keepaliveMs: KEEPALIVE_MS });
    onCleanup(() => beat.stop());
    const accepted = next<ServerSocket>(wss, 'connection');
    const client = await connect(url);
    const server = await accepted;
    const seen = arrivals(client);
    const started = performance.now();
    // The app sends at irregular intervals under keepaliveMs for a while, then stops.
    for (const gap of [30, 60, 90, 20, 80, 50, 95, 10, 70, 40, 85, 30, 60, 90]) {
      await sleep(gap);
      server.send('app');
    }
    const appStoppedAt = performance.now();
    await sleep(8 * KEEPALIVE_MS);
    const during = seen.filter((m) => m.text === '' && m.at < appStoppedAt);
    const after = seen.filter((m) => m.text === '' && m.at >= appStoppedAt);
    // A keepalive may precede the first app message (none was sent in the first keepaliveMs).
    expect(during.length).toBeLessThanOrEqual(1);
    expect(after.length).toBeGreaterThanOrEqual(4);
    const times = [started, ...seen.map((m) => m.at)];
    // 2 x keepaliveMs, plus a scheduling margin for a busy machine.
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeLessThan(2 * KEEPALIVE_MS + 60);
  });

  it('keeps pinging a client that sends nothing: keepalives are not its answers', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 150, pongTimeoutMs: 100, keepaliveMs: 50 });
    onCleanup(() => beat.stop());
    const accepted = next<ServerSocket>(wss, 'connection');
    const client = await connect(url, { autoPong: false });
    const server = await accepted;
    const dead = next(beat, 'dead');
    await dead;
    expect(beat.state(server)).toBeUndefined();
    expect(beat.stats()).toMatchObject({ dead: 1 });
    expect(beat.stats().keepalivesSent).toBeGreaterThanOrEqual(2);
    await waitFor(() => client.readyState === WsWebSocket.CLOSED, 5_000, 'the client to see the close');
  });
});

/** Node's own WHATWG WebSocket when it has one (22+), else ws's. */
const NodeWebSocket = (globalThis as { WebSocket?: new (url: string) => WatchableSocket }).WebSocket;
const which =
  NodeWebSocket !== undefined
    ? `Node ${process.version}'s global WebSocket`
    : "ws's WebSocket (Node 20 has no global one)";

describe(`watch() on ${which}`, () => {
  const open = async (url: string): Promise<WatchableSocket> => {
    const socket: WatchableSocket = NodeWebSocket !== undefined ? new NodeWebSocket(url) : new WsWebSocket(url);
    onCleanup(() => socket.close());
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      (socket as unknown as EventTarget).addEventListener('error', () => reject(new Error('connect failed')));
    });
    return socket;
  };

  it('never declares a server sending keepalives dead, and declares it dead once its path stalls', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { keepaliveMs: KEEPALIVE_MS });
    onCleanup(() => beat.stop());
    const port = Number(new URL(url).port);
    const { proxy, port: proxyPort } = await PartitionProxy.start(port);
    onCleanup(() => proxy.close());

    const socket = await open(`ws://127.0.0.1:${proxyPort}/`);
    const keys = Reflect.ownKeys(socket);
    const watcher = watch(socket, { silenceMs: 4 * KEEPALIVE_MS });
    let keepalives = 0;
    socket.addEventListener('message', ((event: { data: unknown }) => {
      if (watcher.isKeepalive(event)) keepalives++;
    }) as () => void);
    const dead: Array<{ at: number; silentMs: number }> = [];
    watcher.addEventListener('dead', (event) => dead.push({ at: performance.now(), silentMs: event.silentMs }));
    expect(Reflect.ownKeys(socket)).toEqual(keys);

    await sleep(20 * KEEPALIVE_MS);
    expect(dead).toEqual([]);
    expect(keepalives).toBeGreaterThanOrEqual(12);

    const stalledAt = performance.now();
    proxy.stall();
    await waitFor(() => dead.length > 0, 5_000, "the watch's verdict");
    expect(dead[0].at - stalledAt).toBeGreaterThanOrEqual(4 * KEEPALIVE_MS - KEEPALIVE_MS - 20);
    expect(dead[0].at - stalledAt).toBeLessThan(4 * KEEPALIVE_MS + 1_000);
    expect(dead[0].silentMs).toBeGreaterThanOrEqual(4 * KEEPALIVE_MS);
    expect(socket.readyState).toBe(2);
    expect(watcher.isStopped).toBe(true);
    expect(Reflect.ownKeys(socket)).toEqual(keys);
  });
});
