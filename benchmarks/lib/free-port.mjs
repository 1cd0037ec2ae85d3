/**
 * A free loopback port for the servers the redis suites start (redis-server, Redis Cluster
 * nodes). With `withBusPort`, port + 10 000 (a cluster node's bus port) is free too.
 */
import net from 'node:net';

function listenable(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort({ withBusPort = false } = {}) {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await listenable(port)) && (!withBusPort || (await listenable(port + 10_000)))) return port;
  }
  throw new Error('no free loopback port found');
}
