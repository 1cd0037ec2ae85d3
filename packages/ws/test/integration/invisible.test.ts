import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { HeartbeatOptions } from '../../src/types.js';
import { closeAll, connect, next, onCleanup, startServer, waitFor } from '../helpers/servers.js';
import { EVERY_OPTION } from '../helpers/option-sets.js';

afterEach(closeAll);

/** A server and a client, each with a heartbeat of `options`, and the server's side of the connection. */
async function watchedPair(options: HeartbeatOptions): Promise<{ client: WebSocket; server: WebSocket }> {
  const { wss, url } = await startServer();
  const serverBeat = heartbeat(wss, options);
  onCleanup(() => serverBeat.stop());
  const accepted = next<WebSocket>(wss, 'connection');
  const client = new WebSocket(url);
  const clientBeat = heartbeat(client, options);
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
