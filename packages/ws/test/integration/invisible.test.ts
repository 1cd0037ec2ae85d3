import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { HeartbeatOptions } from '../../src/types.js';
import { closeAll, connect, next, onCleanup, startServer, waitFor } from '../helpers/servers.js';
import { EVERY_OPTION, onClient } from '../helpers/option-sets.js';

afterEach(closeAll);

/** A server and a client, each with a heartbeat of `options`, and the server's side of the connection. */
async function watchedPair(options: HeartbeatOptions): Promise<{ client: WebSocket; server: WebSocket }> {
  const { wss, url } = await startServer();
  const serverBeat = heartbeat(wss, options);
  onCleanup(() => serverBeat.stop());
  const accepted = next<WebSocket>(wss, 'connection');
  const client = new WebSocket(url);
  const clientBeat = heartbeat(client, onClient(options));
  onCleanup(() => clientBeat.stop());
  onCleanup(() => client.terminate());
  await next(client, 'open');
  const server = await accepted;
  await waitFor(() => serverBeat.size === 1 && clientBeat.size === 1, 2_000, 'both heartbeats to watch');
  return { client, server };
}

/** What user code can see of a socket's own state. */
const ownKeys = (ws: WebSocket): Array<string | symbol> => Reflect.ownKeys(ws);

describe('nothing user code can see is patched onto the socket', () => {
  for (const [name, options] of Object.entries(EVERY_OPTION)) {
    it(`adds no own property with ${name}`, async () => {
      const { wss, url } = await startServer();
      const accepted = next<WebSocket>(wss, 'connection');
      const bare = await connect(url);
      const bareKeys = { client: ownKeys(bare), server: ownKeys(await accepted) };
      const { client, server } = await watchedPair(options);
      expect(Object.prototype.hasOwnProperty.call(client, 'send')).toBe(false);
      expect(Object.prototype.hasOwnProperty.call(server, 'send')).toBe(false);
      expect(ownKeys(client)).toEqual(bareKeys.client);
      expect(ownKeys(server)).toEqual(bareKeys.server);
    });
  }

  it('calls a WebSocket.prototype.send wrapped after the connection opened (an APM agent)', async () => {
    const { client, server } = await watchedPair(EVERY_OPTION['writerIdleMs + allIdleMs']);
    const proto = WebSocket.prototype as unknown as { send: (...args: unknown[]) => void };
    const original = proto.send;
    const seen: unknown[] = [];
    proto.send = function (this: WebSocket, ...args: unknown[]): void {
      seen.push(args[0]);
      original.apply(this, args);
    };
    try {
      const echoed = next<Buffer>(client, 'message');
      server.send('through the agent');
      client.send('and back');
      expect((await echoed).toString()).toBe('through the agent');
      expect(seen).toEqual(['through the agent', 'and back']);
    } finally {
      proto.send = original;
    }
  });
});

/** Every event name a socket's user may look at, with the number of listeners on each. */
function listenerCounts(ws: WebSocket): Record<string, number> {
  const names = ['open', 'close', 'error', 'message', 'ping', 'pong', 'upgrade', 'unexpected-response', 'redirect'];
  return Object.fromEntries(names.map((name) => [name, ws.listenerCount(name)]));
}

describe('a client socket still connecting', () => {
  it('shows no listener of the heartbeat, and is watched once open', async () => {
    const { url } = await startServer();
    const bare = new WebSocket(url);
    onCleanup(() => bare.terminate());
    const watched = new WebSocket(url);
    onCleanup(() => watched.terminate());
    const beat = heartbeat(watched, { pingIntervalMs: 60_000 });
    onCleanup(() => beat.stop());
    expect(listenerCounts(watched)).toEqual(listenerCounts(bare));
    expect(watched.eventNames()).toEqual(bare.eventNames());
    // ws's "WHATWG API emulation" tests (test/websocket.test.js) look at these while connecting.
    watched.onopen = () => undefined;
    expect(watched.listeners('open')).toHaveLength(1);
    watched.addEventListener('message', () => undefined);
    expect(watched.listenerCount('message')).toBe(1);
    await Promise.all([next(watched, 'open'), next(bare, 'open')]);
    expect(beat.size).toBe(1);
    expect(listenerCounts(watched).open).toBe(1);
  });

  it('keeps watching a socket whose listeners were all removed before it opened', async () => {
    const { url } = await startServer();
    const client = new WebSocket(url);
    onCleanup(() => client.terminate());
    const beat = heartbeat(client, { pingIntervalMs: 60_000 });
    onCleanup(() => beat.stop());
    client.removeAllListeners();
    await waitFor(() => client.readyState === WebSocket.OPEN, 2_000, 'the client to open');
    expect(beat.size).toBe(1);
  });

  it('follows a redirect (followRedirects) and watches the socket once it opens there', async () => {
    const { url } = await startServer();
    const redirector = await import('node:http').then((http) =>
      http.createServer((_req, res) => res.writeHead(302, { location: url }).end()),
    );
    redirector.on('upgrade', (_req, socket) => {
      socket.end(`HTTP/1.1 302 Found\r\nLocation: ${url}\r\nConnection: close\r\n\r\n`);
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => redirector.close(() => resolve())));
    const port = (redirector.address() as { port: number }).port;
    const client = new WebSocket(`ws://127.0.0.1:${port}`, { followRedirects: true });
    onCleanup(() => client.terminate());
    const beat = heartbeat(client, { pingIntervalMs: 60_000 });
    onCleanup(() => beat.stop());
    await next(client, 'open');
    expect(beat.size).toBe(1);
  });

  it('forgets a socket that never opens (refused, or closed while connecting)', async () => {
    const { wss, url } = await startServer();
    const closed = new WebSocket(url);
    const beat = heartbeat(closed, { pingIntervalMs: 60_000 });
    onCleanup(() => beat.stop());
    closed.on('error', () => undefined);
    closed.close();
    await next(closed, 'close');
    expect(beat.size).toBe(0);
    expect(beat.remove(closed)).toBe(false);

    const port = (wss.address() as { port: number }).port;
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    const refused = new WebSocket(`ws://127.0.0.1:${port}`);
    refused.on('error', () => undefined);
    const other = heartbeat(refused, { pingIntervalMs: 60_000 });
    onCleanup(() => other.stop());
    await next(refused, 'close');
    expect(other.size).toBe(0);
    expect(other.remove(refused)).toBe(false);
  });
});
