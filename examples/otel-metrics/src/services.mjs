/**
 * The servers the example times out against, all on 127.0.0.1 with a free port, each with a
 * `close()` that leaves nothing open:
 *
 * - a node:http server: `/fast` answers, `/stall` never sends headers, `/stall-body` sends
 *   headers and one chunk, then nothing;
 * - a ws server under `heartbeat()`, pinging quiet connections after 100 ms and terminating
 *   those that do not answer within 100 ms;
 * - a grpc-js server under `serverDeadlineInterceptor`, whose `/demo.Slow/Capped` calls may take
 *   at most 100 ms, and whose handlers take 1 s unless their deadline aborts them first.
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { currentDeadline } from '@tickwheel/core';
import { serverDeadlineInterceptor } from '@tickwheel/grpc';
import { heartbeat } from '@tickwheel/ws';
import { WebSocketServer } from 'ws';

function listen(server) {
  return new Promise((resolve, reject) =>
    server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server.address().port)),
  );
}

export async function startHttpServer() {
  const server = http.createServer((req, res) => {
    if (req.url === '/fast') res.end('ok');
    else if (req.url === '/stall-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first chunk');
    }
    // '/stall': no headers, ever; the client's timeout ends it.
  });
  const port = await listen(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function startWsServer() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve, reject) => wss.once('error', reject).once('listening', resolve));
  const beat = heartbeat(wss, { pingIntervalMs: 100, pongTimeoutMs: 100 });
  return {
    url: `ws://127.0.0.1:${wss.address().port}`,
    beat,
    async close() {
      beat.stop();
      for (const socket of wss.clients) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

const json = {
  serialize: (value) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes) => JSON.parse(bytes.toString()),
};
const method = (path) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
/** A service defined without a .proto file: JSON messages. */
export const SLOW_SERVICE = { wait: method('/demo.Slow/Wait'), capped: method('/demo.Slow/Capped') };
export const SlowClient = grpc.makeGenericClientConstructor(SLOW_SERVICE, 'Slow');

/** Answers after 1 s, or not at all when the call's deadline aborts first. */
function slowHandler(_call, callback) {
  const timer = setTimeout(() => callback(null, { done: true }), 1_000);
  currentDeadline()?.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
}

export async function startGrpcServer() {
  const server = new grpc.Server({
    interceptors: [serverDeadlineInterceptor({ overrides: { '/demo.Slow/Capped': { maxTimeoutMs: 100 } } })],
  });
  server.addService(SLOW_SERVICE, { wait: slowHandler, capped: slowHandler });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => server.forceShutdown(),
  };
}
