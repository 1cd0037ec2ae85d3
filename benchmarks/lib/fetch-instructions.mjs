/**
 * Client instructions per real request (issue 26's "no dearer than AbortSignal.timeout"),
 * counted by cachegrind as the core suite counts (lib/cachegrind.mjs): long run minus short run,
 * divided by the difference in requests. The client runs under valgrind; the server is a plain
 * node:http child (not counted) answering 512-byte bodies on a keep-alive connection.
 *
 * The warm-up is long because fetch's own code keeps tiering up for thousands of requests: on
 * Node 20 (`--trace-opt`) TurboFan still completes ~50 optimizations per 500 requests up to the
 * 2,000th and ~10 up to the 3,500th, and with a window after only 300 warm-up requests its
 * compilation made up over half of the count, moving it by ~100k between candidates and runs. The
 * window therefore starts after WARMUP requests, where each candidate runs its steady-state code.
 *
 * Full collections come at fixed request counts: the kernel calls `gc()` before every GC_EVERY-th
 * request. undici's fetch keeps every request's objects past two scavenges (its
 * FinalizationRegistry cells are cleared only by a full collection), so the old generation grows
 * by 15-19 KB per request for every candidate. Left to V8, a mark-compact starts from a task once
 * the old generation nears its limit (~18 MB on Node 22, whatever OLD_SPACE_MB asks: its
 * `--trace-incremental-marking` shows `Start (task): 11MB / 18MB`), and its marking advances by
 * wall-clock time, which under valgrind follows the machine's load: whether a run's window held
 * one such collection more than another (each tens of millions of instructions, up to ~30k per
 * request over a 2,000-request window) decided the difference between candidates, and the same
 * candidate moved by as much between two runs. At every GC_EVERY-th request instead, no marking
 * starts on its own (`--trace-gc` shows only the `testing` ones in the window, on Node 20 to 26),
 * and each candidate pays, per request, its share of full collections in proportion to what it
 * leaves to the old generation, at the same points in every run. OLD_SPACE_MB stays, as it still
 * spares the warm-up its own collections.
 *
 * Candidates, each request sequential with its body read by text():
 * - `bare fetch`: `fetch(url)`;
 * - `AbortSignal.timeout`: `fetch(url, { signal: AbortSignal.timeout(LIMIT_MS) })`;
 * - `tickwheel`: `withTimeouts(fetch, { headersMs, bodyIdleMs, totalMs })`, LIMIT_MS each.
 *
 * LIMIT_MS is an hour, longer than any run under valgrind: `AbortSignal.timeout`'s timer is never
 * cleared, and one that fired inside a run would count its abort (which reaches the finished
 * request's own controller through undici's WeakRef to it) as often as the machine's load
 * stretched the run past the limit.
 *
 *   node lib/fetch-instructions.mjs [shortN] [longN]   # prints the counts for this Node (default 1000 3000)
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countInstructions, valgrindAvailable } from './cachegrind.mjs';

const SELF = fileURLToPath(import.meta.url);
/** Requests before the counted window: past fetch's tiering up (see the header). */
export const WARMUP = 3_000;
/** The old generation's initial size: above what the longest run promotes, so no mark-compact lands in a window (see the header). */
export const OLD_SPACE_MB = 1_024;
/** A full collection before every GC_EVERY-th request (see the header): below what V8 starts marking at on its own. */
export const GC_EVERY = 200;
const NODE_FLAGS = [`--initial-old-space-size=${OLD_SPACE_MB}`];
/** Far longer than a run (see the header): no candidate's timer fires while it is counted. */
export const LIMIT_MS = 3_600_000;
const BODY = Buffer.alloc(512, 'x');

export const INSTRUCTION_CANDIDATES = ['bare fetch', 'AbortSignal.timeout', 'tickwheel'];

/** The kernel: WARMUP requests, then `ops` more, one at a time. */
async function kernel(candidate, ops) {
  const url = process.env.FETCH_INSTRUCTIONS_URL;
  let request;
  if (candidate === 'bare fetch') {
    request = () => fetch(url);
  } else if (candidate === 'AbortSignal.timeout') {
    request = () => fetch(url, { signal: AbortSignal.timeout(LIMIT_MS) });
  } else {
    const { withTimeouts } = await import('@tickwheel/fetch');
    const timed = withTimeouts(fetch, { headersMs: LIMIT_MS, bodyIdleMs: LIMIT_MS, totalMs: LIMIT_MS });
    request = () => timed(url);
  }
  for (let i = 0; i < WARMUP + ops; i++) {
    if (i % GC_EVERY === 0) globalThis.gc();
    await (await request()).text();
  }
  process.exit(0);
}

function serve() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BODY.length });
    res.end(BODY);
  });
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (message) => {
    if (message === 'stop') process.exit(0);
  });
}

/**
 * A server child (this file with `--serve`) answering every request with the 512-byte body;
 * `stop()` ends it by its IPC channel. Also the server of lib/fetch-ablation.mjs.
 */
export async function startServer() {
  const child = fork(SELF, ['--serve'], { stdio: 'inherit' });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  return { url: `http://127.0.0.1:${port}/`, stop: () => child.send('stop') };
}

/**
 * Instructions per request of each candidate under `node`: (long - short) / (longN - shortN).
 * @returns `{ [candidate]: { median, samples: [perRequest] } }`, or undefined without valgrind
 */
export async function fetchInstructions(node = process.execPath, shortN = 1_000, longN = 3_000) {
  if (!valgrindAvailable()) return undefined;
  const server = await startServer();
  try {
    const env = { ...process.env, FETCH_INSTRUCTIONS_URL: server.url };
    const results = {};
    for (const candidate of INSTRUCTION_CANDIDATES) {
      const short = countInstructions(node, 'request', candidate, shortN, { kernel: SELF, env, nodeFlags: NODE_FLAGS });
      const long = countInstructions(node, 'request', candidate, longN, { kernel: SELF, env, nodeFlags: NODE_FLAGS });
      const perRequest = Math.round((long - short) / (longN - shortN));
      results[candidate] = { median: perRequest, samples: [perRequest] };
    }
    return results;
  } finally {
    server.stop();
  }
}

if (process.argv[2] === '--serve') {
  serve();
} else if (process.argv[2] === 'request') {
  await kernel(process.argv[3], Number(process.argv[4]));
} else if (process.argv[1] === SELF) {
  const results = await fetchInstructions(
    process.execPath,
    Number(process.argv[2] ?? 1_000),
    Number(process.argv[3] ?? 3_000),
  );
  console.log(JSON.stringify({ node: process.version, undici: process.versions.undici, results }));
}
