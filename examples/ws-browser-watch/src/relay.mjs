/**
 * A TCP relay on 127.0.0.1 that can stall: from `stall()` on it forwards nothing, either way, and
 * closes nothing, as when a server's host vanishes or a network path dies without a FIN or RST.
 * The client's socket stays OPEN; only silence tells.
 */
import net from 'node:net';

/** Starts a relay to 127.0.0.1:`targetPort` on a free port. */
export async function startRelay(targetPort) {
  const pairs = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    pairs.add({ client, upstream });
    client.pipe(upstream, { end: false });
    upstream.pipe(client, { end: false });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    stall() {
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
