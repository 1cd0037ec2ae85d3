/**
 * The http suite's clients: keep-alive "hello" requests kept in flight against a candidate's
 * server (node:http's own client on a keep-alive Agent), and idle keep-alive connections held
 * open for the heap scenario (raw sockets, so the client holds as little as it can).
 */
import http from 'node:http';
import net from 'node:net';

/**
 * Keeps `concurrency` requests in flight to `port` over `connections` keep-alive sockets, each
 * body read to the end, until `stop()`; `done` counts completed requests.
 */
export function keepAliveLoad(port, { connections, concurrency }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const state = { done: 0, failed: 0 };
  let running = true;
  const once = () =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => {
          if (res.statusCode === 200) state.done++;
          else state.failed++;
          resolve();
        });
      });
      req.on('error', () => {
        state.failed++;
        resolve();
      });
    });
  const worker = async () => {
    while (running) await once();
  };
  const workers = Promise.all(Array.from({ length: concurrency }, worker));
  return {
    state,
    async stop() {
      running = false;
      await workers;
      agent.destroy();
    },
  };
}

const REQUEST = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/**
 * Opens `count` connections to `port`, a few at a time, each making one request and then
 * staying open and idle (keep-alive); resolves with the sockets once every response has arrived.
 */
export async function idleConnections(port, count, { parallel = 50 } = {}) {
  const sockets = [];
  const open = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      const onData = (chunk) => {
        received += chunk.toString('latin1');
        // Every candidate answers the same 5-byte body, last in the response.
        if (received.endsWith('hello')) {
          socket.off('data', onData);
          socket.off('error', reject);
          socket.on('error', () => {});
          sockets.push(socket);
          resolve();
        }
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.write(REQUEST);
    });
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next++ < count) await open();
    }),
  );
  return sockets;
}
