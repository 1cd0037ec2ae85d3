/**
 * The sse suite's lab: STREAMS open, idle Server-Sent Events streams with a heartbeat every
 * HEARTBEAT_MS, on one node:http server, two ways:
 *
 * - `tickwheel`: `eventStream(req, res, { heartbeatMs: HEARTBEAT_MS })` from @tickwheel/http (its
 *   defaults otherwise: the slow-consumer limit on);
 * - `hand-written`: what better-sse and most SSE code do: the same head, a `setInterval` per
 *   stream writing a comment, cleared on the response's 'close'.
 *
 * Both write the same bytes per heartbeat (`:\n\n`) to the same sockets, so what differs is the
 * timing: one wheel handle per stream against one Node timer (and its closure) per stream.
 *
 * CPU per heartbeat period is counted by cachegrind as the other suites count (lib/cachegrind.mjs):
 * the server process runs under valgrind twice, holding its streams for SHORT_PERIODS and then
 * LONG_PERIODS heartbeat periods after the last one opened, and the figure is (instructions of
 * the long run - instructions of the short run) / (LONG_PERIODS - SHORT_PERIODS): every stream
 * writes exactly one heartbeat per period in any window of whole periods, whatever its phase.
 * The clients are a child process the server forks (this file with `--client`), which valgrind
 * does not trace; they read and drop every byte.
 *
 * Node runs with NODE_FLAGS (below). Heap per stream is measured without valgrind: the server's heapUsed after full collections
 * with STREAMS streams, then with twice as many, the difference divided by STREAMS.
 *
 *   node lib/sse-streams.mjs count <candidate> <periods>   # the counted process (under valgrind)
 *   node --expose-gc lib/sse-streams.mjs heap <candidate>  # prints heap bytes per stream
 */
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  answerParent,
  countInstructions,
  forkWorker,
  heapAfterGc,
  isMain,
  serveParent,
  sleep,
  valgrindAvailable,
} from './harness.mjs';

const SELF = fileURLToPath(import.meta.url);

export const SSE_CANDIDATES = ['tickwheel', 'hand-written'];
export const STREAMS = Number(process.env.SSE_STREAMS ?? 10_000);
export const HEARTBEAT_MS = 15_000;
export const SHORT_PERIODS = 1;
export const LONG_PERIODS = 2;
/**
 * A fixed old generation and V8's fixed GC schedule, as lib/http-instructions.mjs runs: without
 * them the memory reducer's full collections, which come by the clock while a process idles,
 * land in the windows and the figure measures the heap's size instead of the heartbeats.
 */
export const NODE_FLAGS = ['--initial-old-space-size=1024', '--predictable-gc-schedule'];

const HEAD = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };
const HEARTBEAT = ':\n\n';

/** The request listener of `candidate`; `onStream` is called once per stream opened. */
async function listenerFor(candidate, onStream) {
  switch (candidate) {
    case 'tickwheel': {
      const { eventStream } = await import('@tickwheel/http');
      return (req, res) => {
        eventStream(req, res, { heartbeatMs: HEARTBEAT_MS });
        onStream();
      };
    }
    case 'hand-written':
      return (_req, res) => {
        res.writeHead(200, HEAD);
        res.flushHeaders();
        const timer = setInterval(() => res.write(HEARTBEAT), HEARTBEAT_MS);
        res.on('close', () => clearInterval(timer));
        onStream();
      };
    default:
      throw new Error(`unknown sse candidate ${candidate}; the candidates are ${SSE_CANDIDATES.join(', ')}`);
  }
}

/** A listening server of `candidate`; `opened(n)` resolves once `n` streams have opened in all. */
async function createServer(candidate) {
  let count = 0;
  let waiter;
  const listener = await listenerFor(candidate, () => {
    count++;
    if (waiter !== undefined && count >= waiter.n) waiter.resolve();
  });
  const server = http.createServer(listener);
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', 1_024, resolve));
  const opened = (n) => (count >= n ? Promise.resolve() : new Promise((resolve) => (waiter = { n, resolve })));
  return { server, port: server.address().port, opened };
}

/** A client worker holding streams to `port`; `open(n)` has it open `n` more and resolves when their heads came. */
function clients(port) {
  const worker = forkWorker(SELF, ['--client', String(port)], { label: 'sse clients', execArgv: [] });
  return { open: (n) => worker.ask('open', n), close: () => worker.close() };
}

/** The client worker: opens streams when asked, a hundred at a time, reading and dropping every byte. */
function clientWorker(port) {
  const sockets = [];
  const openOne = () =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let head = true;
      socket.on('data', (chunk) => {
        if (head && chunk.includes('\r\n\r\n')) {
          head = false;
          resolve();
        }
      });
      socket.on('error', reject);
      socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
      sockets.push(socket);
    });
  serveParent(
    {
      open: async (n) => {
        for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, openOne));
        return sockets.length;
      },
    },
    { close: () => sockets.forEach((socket) => socket.destroy()) },
  );
}

/** The counted process: STREAMS streams of `candidate`, held `periods` heartbeat periods after the last opened. */
async function count(candidate, periods) {
  const { server, port, opened } = await createServer(candidate);
  const client = clients(port);
  await client.open(STREAMS);
  await opened(STREAMS);
  await sleep(periods * HEARTBEAT_MS);
  await client.close();
  server.closeAllConnections();
  server.close();
  process.exit(0);
}

/** Answers the server's heap bytes per open stream of `candidate` (this process is the server). */
async function heap(candidate) {
  const { port, opened } = await createServer(candidate);
  const client = clients(port);
  await client.open(STREAMS);
  await opened(STREAMS);
  await sleep(200);
  const first = heapAfterGc();
  await client.open(STREAMS);
  await opened(2 * STREAMS);
  await sleep(200);
  const second = heapAfterGc();
  await client.close();
  answerParent((second - first) / STREAMS);
}

/**
 * Server instructions per heartbeat period of each candidate under `node`, or undefined without valgrind.
 * @returns `{ [candidate]: { median, samples: [perPeriod] } }`
 */
export function instructionsPerPeriod(node = process.execPath, candidates = SSE_CANDIDATES) {
  if (!valgrindAvailable()) return undefined;
  const results = {};
  for (const candidate of candidates) {
    const options = { kernel: SELF, nodeFlags: NODE_FLAGS };
    const short = countInstructions(node, 'count', candidate, SHORT_PERIODS, options);
    const long = countInstructions(node, 'count', candidate, LONG_PERIODS, options);
    const perPeriod = Math.round((long - short) / (LONG_PERIODS - SHORT_PERIODS));
    console.log(`  instructions: ${candidate} ${perPeriod} per heartbeat period (${short} / ${long})`);
    results[candidate] = { median: perPeriod, samples: [perPeriod] };
  }
  return results;
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === 'count') await count(process.argv[3], Number(process.argv[4]));
  else if (process.argv[2] === 'heap') await heap(process.argv[3]);
  else if (process.argv[2] === '--client') clientWorker(Number(process.argv[3]));
}
