/**
 * The http suite: @tickwheel/http's `serverTimeouts` against what a node:http service runs
 * without it, in this one process run, candidates alternating round by round
 * (lib/http-candidates.mjs says exactly what each server does):
 *
 * - `bare`: node:http as it ships (the floor: no per-request deadline);
 * - `tickwheel`: `serverTimeouts` with the handler deadline, `headersMs`, `bodyIdleMs` and
 *   `keepAliveMs` all on;
 * - `hand-written`: a `setTimeout` per request, `clearTimeout` on `finish`;
 * - `connect-timeout`: expressjs/connect-timeout's middleware on plain node:http;
 * - `bare-als` (informational): `bare` in a process that has entered an AsyncLocalStorage, the
 *   floor of any ALS-based ambient deadline on Node 20 and 22.
 *
 * Each candidate's server lives in its own worker process (this file with `--worker <name>`);
 * the parent is the client: node:http's keep-alive Agent keeping CONCURRENCY "hello" requests
 * in flight over CONNECTIONS sockets, each body read to the end. So a figure is the server's
 * alone, and what one candidate loads (AsyncLocalStorage's async hooks, connect-timeout's
 * modules) stays out of the others' processes.
 *
 * Measured:
 * 1. requests per CPU-second of the server (user + system of its worker while SAMPLE_MS of
 *    requests run, after SETTLE_MS that are not counted), and per wall-clock second;
 * 2. server instructions per request, counted by cachegrind (lib/http-instructions.mjs: long run
 *    minus short run, one request at a time): the figure that does not move with load;
 * 3. server heap per idle keep-alive connection: the heap after full GCs with IDLE connections
 *    that each made one request and stay open, then with twice as many, divided by IDLE.
 *
 *   node --expose-gc suites/http.mjs          # or: npm run bench -- http
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 9); BENCH_INSTRUCTIONS=0
 * skips the cachegrind count (minutes per runtime); BENCH_HTTP_CANDIDATES picks candidates.
 */
import { fileURLToPath } from 'node:url';
import { createCandidateServer, HTTP_CANDIDATES, LIMIT_MS } from '../lib/http-candidates.mjs';
import { httpInstructions, WARMUP as INSTRUCTION_WARMUP } from '../lib/http-instructions.mjs';
import { idleConnections, keepAliveLoad } from '../lib/http-load.mjs';
import {
  alternate,
  cpuMicros,
  forkWorker,
  heapAfterGc,
  isMain,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
} from '../lib/harness.mjs';

/** What a user would write instead of serverTimeouts: the root README's table compares with these. */
const HTTP_PEERS = {
  bare: 'bare node:http (no deadline)',
  'hand-written': 'a setTimeout per request',
  'connect-timeout': 'connect-timeout',
};

const SELF = fileURLToPath(import.meta.url);
/** BENCH_HTTP_CANDIDATES=bare,tickwheel runs only those (for a quick look or a profile). */
const CANDIDATES = process.env.BENCH_HTTP_CANDIDATES?.split(',') ?? HTTP_CANDIDATES;
const REPEATS = Number(process.env.BENCH_REPEATS ?? 9);
/** Keep-alive sockets the client opens, and requests it keeps in flight over them. */
const CONNECTIONS = 8;
const CONCURRENCY = 32;
/** How long one throughput sample counts, after SETTLE_MS of requests that are not counted. */
const SAMPLE_MS = 1_500;
const SETTLE_MS = 300;
/** Idle keep-alive connections per heap step (the sample holds twice as many). */
const IDLE = 1_000;
/** Requests in the short and the long cachegrind run. */
const INSTRUCTION_SHORT = 500;
const INSTRUCTION_LONG = 1_500;

// ---------------------------------------------------------------------------------------------
// Worker side: one candidate's server, measuring itself when the parent asks.

async function serveWorker(name) {
  const server = await createCandidateServer(name);
  let cpu0;
  const kinds = {
    /** Starts counting this process's CPU time. */
    'cpu-start': () => {
      cpu0 = process.cpuUsage();
      return true;
    },
    /** CPU microseconds since 'cpu-start'. */
    'cpu-stop': () => cpuMicros(cpu0),
    /** heapUsed after full collections. */
    heap: heapAfterGc,
  };
  serveParent(kinds, { hello: server.port, close: () => server.close() });
}

/** A worker process holding one candidate's server (`ready`: its port); `ask(kind)` has it measure one thing. */
const worker = (name) => forkWorker(SELF, ['--worker', name], { label: `http worker ${name}` });

// ---------------------------------------------------------------------------------------------
// Parent side: the client.

/** One throughput sample against `w`: `{ wall: req/s, cpu: req per server CPU-second }`. */
async function throughput(w) {
  const load = keepAliveLoad(await w.ready, { connections: CONNECTIONS, concurrency: CONCURRENCY });
  try {
    await sleep(SETTLE_MS);
    await w.ask('cpu-start');
    const done0 = load.state.done;
    const t0 = performance.now();
    await sleep(SAMPLE_MS);
    const cpuMicros = await w.ask('cpu-stop');
    const done = load.state.done - done0;
    const wallMs = performance.now() - t0;
    if (load.state.failed > 0) throw new Error(`${load.state.failed} requests failed`);
    return { wall: (done / wallMs) * 1000, cpu: (done / cpuMicros) * 1e6 };
  } finally {
    await load.stop();
  }
}

/** Server heap bytes per idle keep-alive connection: (heap with 2 x IDLE - heap with IDLE) / IDLE. */
async function heapPerConnection(w) {
  const port = await w.ready;
  const sockets = await idleConnections(port, IDLE);
  try {
    await sleep(50);
    const first = await w.ask('heap');
    sockets.push(...(await idleConnections(port, IDLE)));
    await sleep(50);
    const second = await w.ask('heap');
    return (second - first) / IDLE;
  } finally {
    for (const socket of sockets) socket.destroy();
    // Let the server see the closes before the next candidate is measured.
    await sleep(200);
  }
}

export async function run() {
  const t0 = performance.now();
  const workers = Object.fromEntries(CANDIDATES.map((name) => [name, worker(name)]));
  try {
    for (const w of Object.values(workers)) {
      await w.ready;
      // Warm-up, one at a time: JIT, sockets, the young generation's working size.
      await throughput(w);
    }
    return await measureAll(workers, t0);
  } finally {
    await Promise.all(Object.values(workers).map((w) => w.close()));
  }
}

async function measureAll(workers, t0) {
  const perCpuSecond = Object.fromEntries(CANDIDATES.map((name) => [name, []]));
  const wall = await alternate(
    Object.fromEntries(
      CANDIDATES.map((name) => [
        name,
        async () => {
          const { wall: perSecond, cpu } = await throughput(workers[name]);
          perCpuSecond[name].push(cpu);
          return perSecond;
        },
      ]),
    ),
    REPEATS,
  );
  const cpu = summarize(perCpuSecond);
  const heap = await alternate(
    Object.fromEntries(CANDIDATES.map((name) => [name, () => heapPerConnection(workers[name])])),
    Math.min(REPEATS, 5),
  );
  console.log(`  (throughput and heap took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  const instructions =
    process.env.BENCH_INSTRUCTIONS === '0'
      ? undefined
      : httpInstructions(process.execPath, INSTRUCTION_SHORT, INSTRUCTION_LONG, CANDIDATES);

  const limits = `tickwheel = serverTimeouts(server, { defaultTimeoutMs, headersMs, bodyIdleMs, keepAliveMs }), ${LIMIT_MS / 1000} s each, so every request gets a handler deadline (currentDeadline()) and its head, body and keep-alive idle time are timed on the shared wheel`;
  const setup = `node:http servers answering "hello" (5 bytes), each candidate in its own worker process; the client is the parent process: node:http's keep-alive Agent, ${CONCURRENCY} requests in flight over ${CONNECTIONS} sockets, each body read to the end. ${limits}; hand-written = setTimeout per request, clearTimeout on the response's finish; connect-timeout = its middleware called as (req, res, next) on plain node:http. Each sample counts ${SAMPLE_MS} ms of requests after ${SETTLE_MS} ms that are not; medians of ${REPEATS} alternating rounds.`;
  const cpuNote = `${setup} Requests completed per second of the server worker's CPU time (user + system): far less disturbed by other load on the machine than the wall clock. Decided by the instruction count below, which load does not move.`;
  const scenarios = [
    scenario({
      id: 'requests-per-cpu-second',
      title: `Keep-alive requests per server CPU-second, ${CONCURRENCY} in flight, serverTimeouts (every limit on) vs bare node:http`,
      unit: 'req/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare',
      results: cpu,
      peers: HTTP_PEERS,
      target: { ratio: 0.97 },
      note: `${cpuNote} Target (issue 35): at least 0.97x bare node:http.`,
    }),
    scenario({
      id: 'requests-per-cpu-second-vs-hand-written',
      title: `Keep-alive requests per server CPU-second, ${CONCURRENCY} in flight, serverTimeouts vs setTimeout per request`,
      unit: 'req/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'hand-written',
      results: cpu,
      target: { ratio: 1 },
      note: 'The samples of the row above, against the hand-written pattern. Target: at least its throughput.',
    }),
    scenario({
      id: 'requests-per-cpu-second-vs-connect-timeout',
      title: `Keep-alive requests per server CPU-second, ${CONCURRENCY} in flight, serverTimeouts vs connect-timeout`,
      unit: 'req/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'connect-timeout',
      results: cpu,
      target: { ratio: 1 },
      note: 'The same samples, against connect-timeout on node:http. Target: at least its throughput.',
    }),
    scenario({
      id: 'requests-per-cpu-second-als-floor',
      title: `Keep-alive requests per server CPU-second, ${CONCURRENCY} in flight, bare node:http in a process that uses AsyncLocalStorage vs one that does not`,
      unit: 'req/CPU-s',
      higherIsBetter: true,
      subject: 'bare-als',
      baseline: 'bare',
      results: cpu,
      note: "No deadline at all: the cost of AsyncLocalStorage alone (process-wide async hooks on Node 20 and 22), which bounds what any ALS-based ambient deadline such as currentDeadline() can reach there; every traced service (OpenTelemetry's context manager) already pays it.",
    }),
    scenario({
      id: 'requests-per-second',
      title: `Keep-alive requests per second (wall clock), ${CONCURRENCY} in flight, serverTimeouts vs bare node:http`,
      unit: 'req/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare',
      results: wall,
      note: `The same samples by the wall clock; client and server share a loaded 2-core machine, so read it with the CPU figure.`,
    }),
  ];
  if (instructions !== undefined) {
    const instructionNote = `Instructions of the server process under valgrind --tool=cachegrind: (run of ${INSTRUCTION_LONG} requests - run of ${INSTRUCTION_SHORT}) / ${INSTRUCTION_LONG - INSTRUCTION_SHORT}, after ${INSTRUCTION_WARMUP} warm-up requests, one at a time on one keep-alive connection from a client child process that is not counted (lib/http-instructions.mjs); node --initial-old-space-size and --predictable-gc-schedule so that no mark-compact lands in either window. The candidates' servers as above, ${LIMIT_MS / 1000} s limits that never fire.`;
    scenarios.push(
      scenario({
        id: 'instructions-per-request',
        title:
          'Server instructions per keep-alive request, serverTimeouts (every limit on) vs bare node:http (cachegrind)',
        unit: 'instructions',
        higherIsBetter: false,
        subject: 'tickwheel',
        baseline: 'bare',
        results: instructions,
        peers: HTTP_PEERS,
        target: { ratio: 0.97 },
        note: `${instructionNote} Target: as for requests per CPU-second, at most bare's instructions / 0.97.`,
      }),
      scenario({
        id: 'instructions-per-request-vs-hand-written',
        title: 'Server instructions per keep-alive request, serverTimeouts vs setTimeout per request (cachegrind)',
        unit: 'instructions',
        higherIsBetter: false,
        subject: 'tickwheel',
        baseline: 'hand-written',
        results: instructions,
        target: { ratio: 1 },
      }),
      scenario({
        id: 'instructions-per-request-vs-connect-timeout',
        title: 'Server instructions per keep-alive request, serverTimeouts vs connect-timeout (cachegrind)',
        unit: 'instructions',
        higherIsBetter: false,
        subject: 'tickwheel',
        baseline: 'connect-timeout',
        results: instructions,
        target: { ratio: 1 },
      }),
      scenario({
        id: 'instructions-per-request-als-floor',
        title:
          'Server instructions per keep-alive request, bare node:http in a process that uses AsyncLocalStorage vs one that does not (cachegrind)',
        unit: 'instructions',
        higherIsBetter: false,
        subject: 'bare-als',
        baseline: 'bare',
        results: instructions,
      }),
    );
  }
  scenarios.push(
    scenario({
      id: 'heap-per-idle-connection',
      title: `Server heap bytes per idle keep-alive connection (${IDLE} more held open), serverTimeouts (every limit on) vs bare node:http`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'bare',
      results: heap,
      target: { maxOver: 128 },
      note: `Raw sockets from the parent, each sending one request, reading its response and staying open; the server worker's heapUsed after full collections with ${IDLE} such connections, then with ${IDLE * 2}, divided by ${IDLE}. Includes what the keep-alive limit holds per idle connection (tickwheel: one wheel handle; bare: Node's own keepAliveTimeout on the socket). Target (issue 35): at most bare's + 128 bytes.`,
    }),
  );
  return { scenarios };
}

if (isMain(import.meta.url) && process.argv[2] === '--worker') {
  await serveWorker(process.argv[3]);
} else if (isMain(import.meta.url)) {
  await runSuite('http', run, { repeats: REPEATS, print: true });
  process.exit(0);
}
