/**
 * The servers the http suite compares, each a node:http server answering every request with a
 * short "hello" body; the suite (suites/http.mjs) and its instruction count (lib/http-instructions.mjs)
 * both build them here, so both figures measure the same code.
 *
 * - `bare`: the server as Node ships it; its own `headersTimeout` (60 s) and `requestTimeout`
 *   (300 s) checked every `connectionsCheckingInterval`, `keepAliveTimeout` at LIMIT_MS. The floor:
 *   no per-request deadline at all.
 * - `bare-als` (informational): `bare` in a process that has entered an AsyncLocalStorage once,
 *   as every traced service has. On Node 20 and 22 that switches on async hooks for every
 *   resource of the process, which `serverTimeouts`'s ambient deadline (core's
 *   AsyncLocalStorage) cannot avoid: its ratio to `bare` is the floor of any ALS-based ambient
 *   deadline there (the grpc suite's `bare-als`, for the same reason).
 * - `tickwheel`: `serverTimeouts(server, { defaultTimeoutMs, headersMs, bodyIdleMs, keepAliveMs })`,
 *   every limit on, LIMIT_MS each: a handler deadline per request (its `currentDeadline()`),
 *   the head, the body and the idle keep-alive connection timed on the shared wheel.
 * - `hand-written`: the pattern people write: a `setTimeout` per request that answers 503 (or
 *   cuts a started response) and a `clearTimeout` on the response's `finish`.
 * - `connect-timeout`: expressjs/connect-timeout's middleware, called as connect calls it,
 *   `(req, res, next)`, on plain node:http, so no framework's routing is in the figure.
 *
 * Every candidate but `tickwheel` keeps Node's own limits; `serverTimeouts` lifts those its
 * limits cover.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import { createRequire } from 'node:module';

/** Every limit, long enough that none fires while a run measures (a run under valgrind included). */
export const LIMIT_MS = 600_000;

export const HTTP_CANDIDATES = ['bare', 'tickwheel', 'hand-written', 'connect-timeout', 'bare-als'];

const BODY = 'hello';
const HEADERS = { 'content-type': 'text/plain', 'content-length': String(BODY.length) };

/** The handler every candidate ends in. */
function hello(_req, res) {
  res.writeHead(200, HEADERS);
  res.end(BODY);
}

/** What the hand-written timer does when it fires: 503 before the response started, a cut after. */
function expire(res) {
  if (res.headersSent) res.destroy();
  else {
    res.writeHead(503, { connection: 'close' });
    res.end('Service Unavailable');
  }
}

/** The request listener of `candidate` (for `tickwheel`, `serverTimeouts` is attached in `createCandidateServer`). */
function listenerFor(candidate) {
  switch (candidate) {
    case 'bare':
    case 'bare-als':
    case 'tickwheel':
      return hello;
    case 'hand-written':
      return (req, res) => {
        const timer = setTimeout(expire, LIMIT_MS, res);
        res.once('finish', () => clearTimeout(timer));
        hello(req, res);
      };
    case 'connect-timeout': {
      // connect-timeout is CommonJS: `timeout(time, { respond })` returns connect middleware.
      const timeout = createRequire(import.meta.url)('connect-timeout');
      const middleware = timeout(LIMIT_MS);
      return (req, res) =>
        middleware(req, res, (error) => {
          if (error !== undefined) expire(res);
          else if (!req.timedout) hello(req, res);
        });
    }
    default:
      throw new Error(`unknown http candidate ${candidate}; the candidates are ${HTTP_CANDIDATES.join(', ')}`);
  }
}

/**
 * A listening server of `candidate` on 127.0.0.1 and its `close()`; `controller` is
 * `serverTimeouts`'s for `tickwheel`.
 */
export async function createCandidateServer(candidate) {
  if (candidate === 'bare-als') new AsyncLocalStorage().run(true, () => undefined);
  const server = http.createServer(listenerFor(candidate));
  server.keepAliveTimeout = LIMIT_MS;
  let controller;
  if (candidate === 'tickwheel') {
    const { serverTimeouts } = await import('@tickwheel/http');
    controller = serverTimeouts(server, {
      defaultTimeoutMs: LIMIT_MS,
      headersMs: LIMIT_MS,
      bodyIdleMs: LIMIT_MS,
      keepAliveMs: LIMIT_MS,
    });
  }
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    server,
    controller,
    close() {
      controller?.stop();
      server.closeAllConnections();
      server.close();
    },
  };
}
