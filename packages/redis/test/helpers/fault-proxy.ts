/**
 * A TCP proxy on loopback between ioredis and a redis-server, for faults between a write and its
 * reply: it forwards every command, and on demand drops the server's replies (the write is
 * applied, its answer never arrives), drops the client's commands (they never arrive), or cuts
 * every connection (the client sees its connection close, reconnects through the proxy and, as
 * ioredis does by default, sends again the commands that got no reply).
 *
 * It can also throttle the client's commands to a byte rate (a slow link, or a server that reads
 * slowly), so a long pipeline takes seconds to reach Redis.
 *
 * Replies are a stream: once a reply was dropped on a connection, a later one would be matched
 * to the wrong command, so a connection that dropped anything drops everything until it is cut.
 */
import net from 'node:net';

export interface FaultProxy {
  /** The proxy's port and `redis://` URL. */
  readonly port: number;
  readonly url: string;
  /**
   * While true, the server's replies are dropped (and their connections stay mute until cut); a
   * string: only from the first reply that contains it on.
   */
  dropReplies: boolean | string;
  /** While true, the client's commands are dropped (and their connections stay mute until cut). */
  dropCommands: boolean;
  /** The most bytes of commands forwarded per second, per connection (Infinity: as they come). */
  commandBytesPerSecond: number;
  /** Bytes of replies and of commands dropped so far. */
  readonly dropped: { replies: number; commands: number };
  /** Destroys every open connection, both sides. */
  cut(): void;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

/** How often a throttled connection forwards its next slice of commands. */
const THROTTLE_TICK_MS = 10;

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  const pumps = new Set<NodeJS.Timeout>();
  const dropped = { replies: 0, commands: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    let mute = false;
    let held = Buffer.alloc(0);
    let pump: NodeJS.Timeout | undefined;
    const forward = () => {
      const slice = Math.max(1, Math.floor((proxy.commandBytesPerSecond * THROTTLE_TICK_MS) / 1000));
      upstream.write(held.subarray(0, slice));
      held = held.subarray(slice);
      if (held.length === 0 && pump !== undefined) {
        clearInterval(pump);
        pumps.delete(pump);
        pump = undefined;
      }
    };
    const end = () => {
      if (pump !== undefined) {
        clearInterval(pump);
        pumps.delete(pump);
      }
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      if (mute || proxy.dropCommands) {
        mute = true;
        dropped.commands += chunk.length;
      } else if (proxy.commandBytesPerSecond === Infinity && held.length === 0) {
        upstream.write(chunk);
      } else {
        held = Buffer.concat([held, chunk]);
        if (pump === undefined) {
          pump = setInterval(forward, THROTTLE_TICK_MS);
          pumps.add(pump);
        }
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      const drop = proxy.dropReplies;
      if (mute || drop === true || (typeof drop === 'string' && chunk.includes(drop))) {
        mute = true;
        dropped.replies += chunk.length;
      } else client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const cut = () => {
    for (const [client, upstream] of [...pairs]) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    for (const pump of pumps) clearInterval(pump);
    pumps.clear();
  };
  const proxy: FaultProxy = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dropReplies: false,
    dropCommands: false,
    commandBytesPerSecond: Infinity,
    dropped,
    cut,
    close: () => {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
