/**
 * The fetch benchmarks' loopback peer: a node:http server in a worker process that answers every
 * request with one fixed body, and the load of sequential or concurrent fetches against it.
 *
 * The server runs in its own process (this file with `--serve <keepAliveMs> <body>`), so that
 * none of its work lands on the client's CPU time, heap or instruction count.
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { forkWorker, isMain, serveParent } from './harness.mjs';

/** The server worker: answers every request with `body` as text/plain, keeping idle sockets `keepAliveMs`. */
function serve(keepAliveMs, body) {
  const bytes = Buffer.from(body);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': bytes.length });
    res.end(bytes);
  });
  server.keepAliveTimeout = keepAliveMs;
  server.listen(0, '127.0.0.1', () =>
    serveParent(
      {},
      {
        hello: server.address().port,
        close: () => {
          server.closeAllConnections();
          return new Promise((resolve) => server.close(resolve));
        },
      },
    ),
  );
}

/**
 * Starts a server worker answering every request with `body`; resolves with its `url` and
 * `stop()`, which ends it.
 */
export async function startLoopbackServer({ body, keepAliveMs }) {
  const worker = forkWorker(fileURLToPath(import.meta.url), ['--serve', String(keepAliveMs), body], {
    label: 'fetch loopback server',
  });
  const port = await worker.ready;
  return { url: `http://127.0.0.1:${port}/`, stop: () => worker.close() };
}

/** `count` requests of `fetchFn(url, initFor())`, `concurrency` at a time, each reading its body. */
export async function load(fetchFn, url, count, concurrency, initFor = () => undefined) {
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      const res = await fetchFn(url, initFor());
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

if (isMain(import.meta.url) && process.argv[2] === '--serve') serve(Number(process.argv[3]), process.argv[4]);
