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
 * The old generation starts at OLD_SPACE_MB, so no mark-compact runs in either run. undici's fetch
 * keeps every request's objects past two scavenges (its FinalizationRegistry cells are cleared only
 * by a full collection), so the old generation grows by 15-19 KB per request for every candidate,
 * and a full collection comes every ~1,500 requests at tens of millions of instructions. Whether
 * the long run held one, two or three more of them than the short one decided the difference
 * between candidates (0 to +3 per candidate over one 2,000-request window on Node 20). Held off,
 * the count is the work of a request, scavenges included; what each candidate leaves to the old
 * generation is measured beside it (benchmarks/README.md, "fetch: measurements behind the source
 * comments").
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
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { forkWorker, instructionsPerOp, isMain, serveParent, valgrindAvailable } from './harness.mjs';

const SELF = fileURLToPath(import.meta.url);
/** Requests before the counted window: past fetch's tiering up (see the header); FETCH_WARMUP overrides it. */
export const WARMUP = Number(process.env.FETCH_WARMUP ?? 3_000);
/** The old generation's initial size: above what the longest run promotes, so no mark-compact lands in a window (see the header). */
export const OLD_SPACE_MB = 1_024;
/**
 * `--predictable-gc-schedule`: V8's fixed heap growing, without its idle-time and memory-reducing
 * collections. Without it a mark-compact started from a task and marked by wall-clock time, which
 * under valgrind stretches with the machine's load, so whether one landed in a window, and the
 * count, moved with the load: the same kernel counted 442,620 and 475,216 per request on Node 22.
 */
export const NODE_FLAGS = [`--initial-old-space-size=${OLD_SPACE_MB}`, '--predictable-gc-schedule'];
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
  for (let i = 0; i < WARMUP + ops; i++) await (await request()).text();
  process.exit(0);
}

function serve() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BODY.length });
    res.end(BODY);
  });
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1', () => serveParent({}, { hello: server.address().port }));
}

/**
 * A server worker (this file with `--serve`) answering every request with the 512-byte body;
 * `stop()` ends it. Also the server of lib/fetch-ablation.mjs.
 */
export async function startServer() {
  const worker = forkWorker(SELF, ['--serve']);
  const port = await worker.ready;
  return { url: `http://127.0.0.1:${port}/`, stop: () => worker.close() };
}

/**
 * Instructions per request of each candidate under `node`: `instructionsPerOp`, long run minus short run.
 * @returns `{ [candidate]: { median, samples: [perRequest] } }`, or undefined without valgrind
 */
export async function fetchInstructions(node = process.execPath, shortN = 1_000, longN = 3_000) {
  if (!valgrindAvailable()) return undefined;
  const server = await startServer();
  try {
    const env = { ...process.env, FETCH_INSTRUCTIONS_URL: server.url };
    const results = {};
    for (const candidate of INSTRUCTION_CANDIDATES) {
      const count = instructionsPerOp(
        node,
        'request',
        candidate,
        { shortOps: shortN, longOps: longN },
        { kernel: SELF, env, nodeFlags: NODE_FLAGS },
      );
      const perRequest = Math.round(count.perOp);
      results[candidate] = { median: perRequest, samples: [perRequest] };
    }
    return results;
  } finally {
    await server.stop();
  }
}

if (isMain(import.meta.url) && process.argv[2] === '--serve') {
  serve();
} else if (isMain(import.meta.url) && process.argv[2] === 'request') {
  await kernel(process.argv[3], Number(process.argv[4]));
} else if (isMain(import.meta.url)) {
  const results = await fetchInstructions(
    process.execPath,
    Number(process.argv[2] ?? 1_000),
    Number(process.argv[3] ?? 3_000),
  );
  console.log(JSON.stringify({ node: process.version, undici: process.versions.undici, results }));
}
