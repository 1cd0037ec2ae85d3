/**
 * A TCP proxy on loopback between ioredis and a redis-server, for faults between a write and its
 * reply: it forwards every command, and on demand drops the server's replies (the write is
 * applied, its answer never arrives), drops the client's commands (they never arrive), or cuts
 * every connection (the client sees its connection close, reconnects through the proxy and, as
 * ioredis does by default, sends again the commands that got no reply).
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
  /** Bytes of replies and of commands dropped so far. */
  readonly dropped: { replies: number; commands: number };
  /** Destroys every open connection, both sides. */
  cut(): void;
  /** Cuts every connection and stops listening. */
  close(): Promise<void>;
}

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  const dropped = { replies: 0, commands: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    let mute = false;
    const end = () => {
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
      } else upstream.write(chunk);
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
  };
  const proxy: FaultProxy = {
    port,
    url: `redis://127.0.0.1:${port}`,
    dropReplies: false,
    dropCommands: false,
    dropped,
    cut,
    close: () => {
      cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
