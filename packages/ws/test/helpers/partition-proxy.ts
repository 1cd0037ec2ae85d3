import net from 'node:net';

/**
 * A TCP relay on 127.0.0.1 that can simulate a network partition. It forwards bytes both ways
 * until `partition()`; from then on the server side stays open and silent (nothing delivered,
 * nothing read, no FIN), as with a vanished host or a dead network path, and the client side is
 * cut off. Without it, a killed client is noticed at once: its kernel closes the connection (and
 * Chromium's surviving renderer even sends a close frame), so the heartbeat would never be needed.
 */
export class PartitionProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();

  private constructor(targetPort: number) {
    this.server = net.createServer((client) => {
      const upstream = net.connect(targetPort, '127.0.0.1');
      this.pairs.add({ client, upstream });
      client.pipe(upstream, { end: false });
      upstream.pipe(client, { end: false });
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
  }

  /** Starts a relay to `127.0.0.1:targetPort` on a free port. */
  static async start(targetPort: number): Promise<{ proxy: PartitionProxy; port: number }> {
    const proxy = new PartitionProxy(targetPort);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return { proxy, port: (proxy.server.address() as net.AddressInfo).port };
  }

  /** Cuts every relayed connection: the server side stays open but hears nothing more, ever. */
  partition(): void {
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.pause();
      client.destroy();
    }
  }

  /**
   * Stops relaying, both ways, and closes nothing: each side keeps an open connection that hears
   * nothing more (a half-open path, as when a server's host vanishes without a FIN or RST).
   */
  stall(): void {
    for (const { client, upstream } of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.pause();
      client.pause();
    }
  }

  /** Destroys every relayed socket and stops listening. */
  async close(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
