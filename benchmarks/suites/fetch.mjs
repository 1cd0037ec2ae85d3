/**
 * The fetch suite: @tickwheel/fetch's `withTimeouts` against the ways Node users put a timeout on
 * `fetch` today, all in this one process run, candidates alternating round by round:
 *
 * - `AbortSignal.timeout`: `fetch(url, { signal: AbortSignal.timeout(ms) })`;
 * - `AbortSignal.any`: `AbortSignal.any([userSignal, AbortSignal.timeout(ms)])`, when the caller
 *   also has a signal of their own;
 * - `AbortController+setTimeout`: a controller per request, a `setTimeout` that aborts it, and
 *   `clearTimeout` when the response is complete (the hand-written pattern).
 *
 * Scenarios:
 * 1. timeout bookkeeping per request, in isolation (no fetch, no network): create what times one
 *    request and complete it. For withTimeouts that is its per-request timer (request-timer.js
 *    from the built dist: an AbortController, one wheel handle, released when the body-less
 *    response arrives); for the others, the signal and timer the request would use. CPU time
 *    per request, garbage collection included. Then the same with a caller signal to link.
 * 1b. the whole wrapper per request with a stub fetch that answers at once (informational): CPU
 *    per request above the same stub called with a plain signal.
 * 2. heap retained after 100,000 completed requests that had a 60 s timeout, each sample in a
 *    fresh child process (so timers left by other samples cannot fire during a measurement):
 *    (a) with the stub fetch, (b) with global fetch against a real node:http server.
 * 3. requests per second, and client CPU per request, against a local node:http server (in a
 *    child process, so the server's work does not share this process): global fetch bare, wrapped
 *    with all three limits, with AbortSignal.timeout, and with a plain signal (the floor).
 * 3b. client instructions per request against that server, counted by cachegrind (long run minus
 *    short run, lib/fetch-instructions.mjs): bare fetch, AbortSignal.timeout and the wrapper.
 * 4. the diagnostics channels (issue 18): the whole wrapper per request, and per request that
 *    times out, with the channels compiled out, with no subscriber, and with the OpenTelemetry
 *    bridge on (lib/channel-candidates.mjs).
 *
 *   node --expose-gc suites/fetch.mjs          # or: npm run bench -- fetch
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 5); BENCH_INSTRUCTIONS=0
 * skips the cachegrind count (FETCH_WARMUP shortens its warm-up, for a quick look).
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sharedWheel } from '@tickwheel/core';
import { withTimeouts } from '@tickwheel/fetch';
import { bridgeOn, CHANNEL_CANDIDATES, compiledOut } from '../lib/channel-candidates.mjs';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import {
  fetchInstructions,
  LIMIT_MS as INSTRUCTION_LIMIT_MS,
  OLD_SPACE_MB,
  WARMUP as INSTRUCTION_WARMUP,
} from '../lib/fetch-instructions.mjs';
import {
  alternate,
  answerParent,
  BENCH_DIR,
  childValue,
  cpuMicros,
  forkWorker,
  gc,
  isMain,
  median,
  printScenario,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
} from '../lib/harness.mjs';

// The per-request timer is internal to the package; the isolation scenario loads it from the
// built dist by path (the package's exports map only exposes the public API).
const { RequestTimer } = await import(
  pathToFileURL(path.join(BENCH_DIR, '..', 'packages', 'fetch', 'dist', 'request-timer.js')).href
);
const { resolveOptions } = await import(
  pathToFileURL(path.join(BENCH_DIR, '..', 'packages', 'fetch', 'dist', 'options.js')).href
);

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
/** Requests in the short and the long cachegrind run of the instruction count. */
const INSTRUCTION_SHORT = 1_000;
const INSTRUCTION_LONG = 3_000;
const TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// 1. Bookkeeping per request, in isolation.

const ISOLATION_OPS = 20_000;
const STUB_URL = 'http://127.0.0.1:1/stub';
const EMPTY_RESPONSE = new Response(null, { status: 204 });
const userSignal = new AbortController().signal;
const noop = () => {};

/** CPU microseconds (user + system, all threads: GC included) spent in `fn`. */
function cpuOf(fn) {
  const start = process.cpuUsage();
  fn();
  return cpuMicros(start);
}

/** ns of CPU per op for ISOLATION_OPS calls of `op`. */
function isolationSample(op) {
  return () =>
    (cpuOf(() => {
      for (let i = 0; i < ISOLATION_OPS; i++) op();
    }) *
      1000) /
    ISOLATION_OPS;
}

const resolved = resolveOptions({ totalMs: TIMEOUT_MS }, undefined, '');
/** Where candidates put the signal they would hand to fetch, so that it is really created. */
let _signalSink;

/** The timer alone: the wheel handle withTimeouts uses, against the timers of the others. */
const timerOnly = {
  tickwheel: () => {
    sharedWheel().schedule(TIMEOUT_MS, noop).unref().cancel();
  },
  'AbortSignal.timeout': () => {
    _signalSink = AbortSignal.timeout(TIMEOUT_MS);
  },
  'setTimeout+clearTimeout': () => {
    clearTimeout(setTimeout(noop, TIMEOUT_MS));
  },
};

const isolation = {
  tickwheel: () => {
    const timer = new RequestTimer(resolved, STUB_URL, 'GET', undefined, undefined);
    timer.beginAttempt();
    timer.responseArrived(EMPTY_RESPONSE);
  },
  'AbortSignal.timeout': () => {
    _signalSink = AbortSignal.timeout(TIMEOUT_MS);
  },
  'AbortController+setTimeout': () => {
    const controller = new AbortController();
    _signalSink = controller.signal;
    clearTimeout(setTimeout(() => controller.abort(), TIMEOUT_MS));
  },
};

const isolationWithUserSignal = {
  tickwheel: () => {
    const timer = new RequestTimer(resolved, STUB_URL, 'GET', userSignal, undefined);
    timer.beginAttempt();
    timer.responseArrived(EMPTY_RESPONSE);
  },
  'AbortSignal.any': () => {
    _signalSink = AbortSignal.any([userSignal, AbortSignal.timeout(TIMEOUT_MS)]);
  },
  'AbortController+setTimeout': () => {
    const controller = new AbortController();
    _signalSink = controller.signal;
    const onAbort = () => controller.abort(userSignal.reason);
    userSignal.addEventListener('abort', onAbort);
    clearTimeout(setTimeout(() => controller.abort(), TIMEOUT_MS));
    userSignal.removeEventListener('abort', onAbort);
  },
};

// 1b. The whole wrapper with a stub fetch.

const STUB_BATCH = 500;
const STUB_BATCHES = 20;
/**
 * Requests per wrapper-cpu-total sample: long enough that AbortSignal.timeout's deferred work
 * (its signals and 60 s timers, collected while later requests run) is counted as it would be
 * in a busy process, rather than left for after the measurement.
 */
const TOTAL_REQUESTS = 50_000;

/** Answers at once with a body-less response; like fetch, it listens to the signal while in flight. */
function stubFetch(_input, init) {
  const signal = init?.signal;
  if (signal) {
    const onAbort = () => {};
    signal.addEventListener('abort', onAbort);
    return Promise.resolve(EMPTY_RESPONSE).finally(() => signal.removeEventListener('abort', onAbort));
  }
  return Promise.resolve(EMPTY_RESPONSE);
}

const timedStub = withTimeouts(stubFetch, { totalMs: TIMEOUT_MS });
const plainSignal = new AbortController().signal;

/** {@link cpuOf} for an async `fn`. */
async function cpuOfAsync(fn) {
  const start = process.cpuUsage();
  await fn();
  return cpuMicros(start);
}

/**
 * CPU ns per request of `once` over a long sequential run, everything included: the wrapper,
 * the stub, and the collection of what they leave (AbortSignal.timeout's signals and timers).
 */
function wrapperTotalSample(once) {
  return async () => {
    const requests = TOTAL_REQUESTS;
    const used = await cpuOfAsync(async () => {
      for (let i = 0; i < requests; i++) await once();
    });
    return (used * 1000) / requests;
  };
}

/** Median over batches of (candidate - stub with a plain signal), ns of CPU per request. */
function wrapperSample(once) {
  return async () => {
    const diffs = [];
    for (let b = 0; b < STUB_BATCHES; b++) {
      const candidate = await cpuOfAsync(async () => {
        for (let i = 0; i < STUB_BATCH; i++) await once();
      });
      const floor = await cpuOfAsync(async () => {
        for (let i = 0; i < STUB_BATCH; i++) await stubFetch(STUB_URL, { signal: plainSignal });
      });
      diffs.push(((candidate - floor) * 1000) / STUB_BATCH);
    }
    return median(diffs);
  };
}

const wrapper = {
  tickwheel: () => timedStub(STUB_URL),
  'AbortSignal.timeout': () => stubFetch(STUB_URL, { signal: AbortSignal.timeout(TIMEOUT_MS) }),
  'AbortController+setTimeout': async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    try {
      await stubFetch(STUB_URL, { signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// The local server: a child process answering every request with a small body.

async function serverMain() {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('hello from 127.0.0.1');
  });
  server.keepAliveTimeout = 60_000;
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

/** The local server (this file with `--server`, also lib/fetch-profile.mjs's); `stop()` ends it. */
export async function startServer() {
  const worker = forkWorker(fileURLToPath(import.meta.url), ['--server'], { label: 'fetch server' });
  const port = await worker.ready;
  return { url: `http://127.0.0.1:${port}/`, stop: () => worker.close() };
}

/** `count` requests, `concurrency` at a time, each reading its body. */
async function load(fetchFn, url, count, concurrency, initFor) {
  let next = 0;
  const worker = async () => {
    while (next++ < count) {
      const res = await fetchFn(url, initFor());
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

// ---------------------------------------------------------------------------------------------
// 2. Heap retained after 100k completed requests with a 60 s timeout, one child process per sample.

const HEAP_REQUESTS = 100_000;
const HEAP_CONCURRENCY = 32;
const HEAP_WARMUP = 2_000;

/** The requests a heap sample makes, by candidate; `url` is the server's for real fetch. */
function heapRuns(url) {
  const timed = withTimeouts(fetch, { totalMs: TIMEOUT_MS });
  const sequential = (once) => async (n) => {
    for (let i = 0; i < n; i++) await once();
  };
  return {
    'stub:tickwheel': sequential(() => timedStub(STUB_URL)),
    'stub:AbortSignal.timeout': sequential(() => stubFetch(STUB_URL, { signal: AbortSignal.timeout(TIMEOUT_MS) })),
    'stub:AbortController+setTimeout': sequential(() => wrapper['AbortController+setTimeout']()),
    'fetch:tickwheel': (n) => load(timed, url, n, HEAP_CONCURRENCY, () => undefined),
    'fetch:AbortSignal.timeout': (n) =>
      load(fetch, url, n, HEAP_CONCURRENCY, () => ({ signal: AbortSignal.timeout(TIMEOUT_MS) })),
  };
}

/**
 * A full collection whose finalizers have run: fetch's Request keeps `{ signal, abort }` in a
 * FinalizationRegistry until its cleanup task runs after the collection, so heapUsed read
 * straight after gc() still counts the last requests' signals for every candidate.
 */
async function settledGc() {
  gc();
  await sleep(50);
  gc();
}

/** In a child: warm up, then report heapUsed after a full GC minus before, in MiB (0 if it shrank). */
async function heapChildMain(candidate, url) {
  const run = heapRuns(url)[candidate];
  await run(HEAP_WARMUP);
  await settledGc();
  const before = process.memoryUsage().heapUsed;
  await run(HEAP_REQUESTS);
  await settledGc();
  answerParent(Math.max(process.memoryUsage().heapUsed - before, 0) / 2 ** 20);
}

/** A sample taken in a fresh child process: this file with `args`. */
function childSample(...args) {
  return () => childValue(fileURLToPath(import.meta.url), args, { label: `fetch ${args.join(' ')}` });
}

const heapSample = (candidate, url = '') => childSample('--heap', candidate, url);

// ---------------------------------------------------------------------------------------------
// 4. The diagnostics channels: what they cost with nobody listening, and with the bridge on.

const CHANNEL_REQUESTS = 2_000;
/** Where the parent put the compiled-out copy of core and fetch, for the children to load. */
const COMPILED_OUT_ENV = 'TICKWHEEL_COMPILED_OUT_DIR';

/** withTimeouts and ManualClock from the build under test, or from the compiled-out copy. */
async function channelPackages(candidate) {
  if (candidate !== CHANNEL_CANDIDATES.compiledOut) return { withTimeouts, core: await import('@tickwheel/core') };
  const base = path.join(process.env[COMPILED_OUT_ENV], 'node_modules', '@tickwheel');
  const load = (name) => import(pathToFileURL(path.join(base, name, 'dist', 'index.js')).href);
  return { withTimeouts: (await load('fetch')).withTimeouts, core: await load('core') };
}

/** A stub fetch that never answers: it rejects when its signal aborts, as fetch does. */
function stallingStub(_input, init) {
  return new Promise((_resolve, reject) =>
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true }),
  );
}

/**
 * CPU ns per request of one candidate: `'requests'` completes each request at once (the common
 * case: a channel is only read), `'timeouts'` times every one out (each publishes a timeout, and
 * the wheel a wake-up). The timeouts run on a ManualClock wheel of the candidate's own core, so a
 * sample fires CHANNEL_REQUESTS timeouts in one advance() instead of waiting for them.
 */
async function channelSample(workload, candidate) {
  const { withTimeouts: wrap, core } = await channelPackages(candidate);
  // A wheel of the candidate's own core (the compiled-out fetch accepts only those; the shared
  // wheel on globalThis belongs to the core this file loaded), kept busy as in cpuChildMain.
  const wheel = new core.TimingWheel();
  wheel.schedule(TIMEOUT_MS * 10, noop).unref();
  const bridge = candidate === CHANNEL_CANDIDATES.bridgeOn ? bridgeOn() : undefined;
  let once;
  if (workload === 'requests') {
    const timed = wrap(stubFetch, { totalMs: TIMEOUT_MS, wheel });
    once = () => timed(STUB_URL);
  } else {
    const clock = new core.ManualClock(0);
    const timed = wrap(stallingStub, { headersMs: 1, wheel: new core.TimingWheel({ clock }) });
    once = async () => {
      const pending = [];
      for (let i = 0; i < CHANNEL_REQUESTS; i++) pending.push(timed(STUB_URL).catch(noop));
      await Promise.resolve();
      clock.advance(1);
      await Promise.all(pending);
    };
  }
  const sample = async () => {
    const rounds = workload === 'requests' ? STUB_BATCH * STUB_BATCHES : 1;
    const used = await cpuOfAsync(async () => {
      for (let i = 0; i < rounds; i++) await once();
    });
    return (used * 1000) / (workload === 'requests' ? rounds : CHANNEL_REQUESTS);
  };
  await sample(); // warm-up
  gc();
  await sample(); // re-warm: the full collection discarded optimized code (see cpuChildMain)
  const value = await sample();
  await bridge?.disable();
  return value;
}

async function channelChildMain(workload, candidate) {
  answerParent(await channelSample(workload, candidate));
}

function channelCandidates(workload) {
  return Object.fromEntries(
    Object.values(CHANNEL_CANDIDATES).map((name) => [name, childSample('--channels', workload, name)]),
  );
}

/**
 * CPU samples run in a fresh child each, so that one candidate's garbage (AbortSignal.timeout
 * keeps every signal and timer for 60 s) is not collected, concurrently, on another's clock.
 */
const CPU_GROUPS = {
  timer: timerOnly,
  bookkeeping: isolation,
  'user-signal': isolationWithUserSignal,
  wrapper,
  'wrapper-total': wrapper,
};

async function cpuChildMain(group, candidate) {
  // Other requests in flight keep a busy wheel non-empty; without this the shared wheel would
  // arm and disarm its native timer on every isolated request, which no server sees.
  sharedWheel()
    .schedule(TIMEOUT_MS * 10, noop)
    .unref();
  const subject = CPU_GROUPS[group][candidate];
  const sample =
    group === 'wrapper'
      ? wrapperSample(subject)
      : group === 'wrapper-total'
        ? wrapperTotalSample(subject)
        : isolationSample(subject);
  await sample(); // warm-up: JIT, and the shapes of every object involved
  gc();
  // The first full collection throws away optimized code whose embedded objects died (V8
  // --trace-deopt: "marking dependent code ... reason: weak objects"), which a long-running
  // process pays once: warm up again so the sample measures steady state, not re-optimization.
  await sample();
  answerParent(await sample());
}

function cpuCandidates(group) {
  return Object.fromEntries(Object.keys(CPU_GROUPS[group]).map((name) => [name, childSample('--cpu', group, name)]));
}

// ---------------------------------------------------------------------------------------------
// 3. Requests per second, bare fetch and wrapped.

const RPS_REQUESTS = 5_000;
const RPS_CONCURRENCY = 8;
const RPS_ROUNDS = REPEATS;

const RPS_WARMUP = 1_500;

/** The three ways of fetching compared for throughput. */
function rpsRuns() {
  const timed = withTimeouts(fetch, { headersMs: TIMEOUT_MS, bodyIdleMs: TIMEOUT_MS, totalMs: TIMEOUT_MS });
  return {
    tickwheel: [timed, () => undefined],
    'bare fetch': [fetch, () => undefined],
    'AbortSignal.timeout': [fetch, () => ({ signal: AbortSignal.timeout(TIMEOUT_MS) })],
    'fetch+signal': [fetch, () => ({ signal: new AbortController().signal })],
  };
}

/**
 * In a child: warm up, then report requests per second (wall clock) and the client's CPU per
 * request (user+system of this process, which other load on a shared machine disturbs much less).
 * A fresh process per sample keeps one candidate's deferred work (AbortSignal.timeout's timers
 * and finalizers) off the others' clocks.
 */
async function rpsChildMain(candidate, url) {
  const [fetchFn, initFor] = rpsRuns()[candidate];
  await load(fetchFn, url, RPS_WARMUP, RPS_CONCURRENCY, initFor);
  gc();
  // Re-warm: the full collection discarded optimized code (see cpuChildMain).
  await load(fetchFn, url, RPS_WARMUP, RPS_CONCURRENCY, initFor);
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await load(fetchFn, url, RPS_REQUESTS, RPS_CONCURRENCY, initFor);
  const elapsed = performance.now() - t0;
  const used = cpuMicros(cpu);
  answerParent({ rps: (RPS_REQUESTS / elapsed) * 1000, cpuMicros: used / RPS_REQUESTS });
}

function rpsCandidates(url, cpuSamples) {
  return Object.fromEntries(
    Object.keys(rpsRuns()).map((name) => [
      name,
      async () => {
        const { rps, cpuMicros: perRequest } = await childSample('--rps', name, url)();
        (cpuSamples[name] ??= []).push(perRequest);
        return rps;
      },
    ]),
  );
}

// ---------------------------------------------------------------------------------------------

function record(scenarios, spec) {
  const sc = scenario(spec);
  scenarios.push(sc);
  printScenario(sc);
}

export async function run() {
  const t0 = performance.now();
  const scenarios = [];
  const isolationNote = `A ${TIMEOUT_MS / 1000} s timeout; ${ISOLATION_OPS.toLocaleString('en-US')} create+complete cycles per sample in a synchronous loop after a warm-up, a full collection and a second warm-up (the collection discards optimized code), each sample in a fresh child process; CPU time (user+system, so the collector's work counts) per cycle, one shared-wheel timer pending meanwhile as in a busy process. tickwheel = the RequestTimer withTimeouts makes per request (an AbortController whose signal fetch gets, one handle on the shared wheel, cancelled when the body-less response arrives); AbortSignal.timeout cannot be cleared, so its "complete" is a no-op; AbortController+setTimeout creates its signal too and ends with clearTimeout. On Node 20, creating an AbortSignal is most of what AbortSignal.timeout itself costs (createAbortSignal re-prototypes an EventTarget), and every design that can abort a fetch needs one signal per request.`;
  record(scenarios, {
    id: 'bookkeeping-handle',
    title: 'The timer per request, in isolation: wheel handle vs AbortSignal.timeout',
    unit: 'ns',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.timeout',
    results: await alternate(cpuCandidates('timer'), REPEATS),
    target: { ratio: 10 },
    note: `The timing part alone: withTimeouts' one handle per request (schedule on the shared wheel, unref, cancel) against AbortSignal.timeout (a signal and its timer, which cannot be split or cleared) and setTimeout+clearTimeout. ${ISOLATION_OPS.toLocaleString('en-US')} cycles per sample, CPU time per cycle, collection included.`,
  });
  record(scenarios, {
    id: 'bookkeeping',
    title: 'Timeout bookkeeping per request, in isolation',
    unit: 'ns',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.timeout',
    results: await alternate(cpuCandidates('bookkeeping'), REPEATS),
    target: { ratio: 10 },
    note: isolationNote,
  });
  record(scenarios, {
    id: 'bookkeeping-user-signal',
    title: 'Timeout bookkeeping per request with a caller signal, in isolation',
    unit: 'ns',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.any',
    results: await alternate(cpuCandidates('user-signal'), REPEATS),
    target: { ratio: 10 },
    note: `As above, with a long-lived caller signal linked to each request: tickwheel adds one listener and removes it at completion; AbortSignal.any([user, AbortSignal.timeout()]) composes signals; the hand-written pattern adds and removes a listener.`,
  });
  record(scenarios, {
    id: 'wrapper-overhead',
    title: 'Whole wrapper per request with a stub fetch (informational)',
    unit: 'ns',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.timeout',
    results: await alternate(cpuCandidates('wrapper'), REPEATS),
    target: { ratio: 1 },
    note: `withTimeouts(stub, { totalMs }) called like fetch, against the stub called with AbortSignal.timeout() or a hand-made controller: each sample in a fresh child process; CPU ns per request above the stub called with a plain signal (which adds and removes an abort listener, as fetch does), median of ${STUB_BATCHES} batches of ${STUB_BATCH} sequential requests per sample. Includes the wrapper's async plumbing (option merge, URL/method capture, init copy, the dispatcher tap it hands fetch, one extra promise hop). Batch medians leave out AbortSignal.timeout's deferred collection cost. Target: no more than AbortSignal.timeout's (ratio >= 1).`,
  });
  record(scenarios, {
    id: 'wrapper-cpu-total',
    title: 'Whole wrapper per request with a stub fetch, all CPU included',
    unit: 'ns',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.timeout',
    results: await alternate(cpuCandidates('wrapper-total'), REPEATS),
    target: { ratio: 1 },
    note: `As above, but all CPU of ${TOTAL_REQUESTS.toLocaleString('en-US')} sequential requests per sample divided by their number, the stub's own work and every collection included (AbortSignal.timeout's signals and timers are collected during the run), measured after a warm-up, a full collection and a second warm-up (the collection discards optimized code, which a long-running process re-optimizes once). Target: no more than AbortSignal.timeout's (ratio >= 1).`,
  });

  const stubHeap = await alternate(
    {
      tickwheel: heapSample('stub:tickwheel'),
      'AbortSignal.timeout': heapSample('stub:AbortSignal.timeout'),
      'AbortController+setTimeout': heapSample('stub:AbortController+setTimeout'),
    },
    Math.min(REPEATS, 2),
  );
  record(scenarios, {
    id: 'heap-retained',
    title: `Heap retained after ${HEAP_REQUESTS / 1000}k completed requests with a ${TIMEOUT_MS / 1000} s timeout (stub fetch)`,
    unit: 'MiB',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'AbortSignal.timeout',
    results: stubHeap,
    target: { max: stubHeap['AbortSignal.timeout'].median / 100 },
    note: `The stub fetch of scenario 1b (it removes its abort listener when the response is complete), ${HEAP_REQUESTS.toLocaleString('en-US')} sequential requests after ${HEAP_WARMUP.toLocaleString('en-US')} warm-up ones, each sample in a fresh child process. heapUsed after full collections 50 ms apart (so finalizers have run) minus before, 0 when the heap shrank. Target: under 1% of AbortSignal.timeout's median.`,
  });

  const server = await startServer();
  try {
    const fetchHeap = await alternate(
      {
        tickwheel: heapSample('fetch:tickwheel', server.url),
        'AbortSignal.timeout': heapSample('fetch:AbortSignal.timeout', server.url),
      },
      1,
    );
    record(scenarios, {
      id: 'heap-retained-fetch',
      title: `Heap retained after ${HEAP_REQUESTS / 1000}k completed fetch requests with a ${TIMEOUT_MS / 1000} s timeout`,
      unit: 'MiB',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'AbortSignal.timeout',
      results: fetchHeap,
      target: { max: fetchHeap['AbortSignal.timeout'].median / 100 },
      note: `Real requests: global fetch (Node ${process.version}, bundled undici ${process.versions.undici}) against a node:http server in a child process, ${HEAP_CONCURRENCY} in flight, each body read to the end, in a fresh child process per sample; one sample per candidate (each takes tens of seconds). heapUsed after a full GC (and its finalizers) minus before, 0 when the heap shrank. fetch's Request drops its listener on the signal only once the Request is collected, so over a run this long the collections that happen meanwhile release much of what AbortSignal.timeout holds; the rest is what is left at the end.`,
    });

    const cpuSamples = {};
    let rps;
    const rpsSetup = `global fetch against a node:http server in a child process, ${RPS_CONCURRENCY} requests in flight, ${RPS_REQUESTS.toLocaleString('en-US')} per sample after ${RPS_WARMUP} warm-up ones, a full collection and ${RPS_WARMUP} more (the collection discards optimized code), each sample in a fresh child process, each body read with text(). tickwheel = withTimeouts(fetch, { headersMs, bodyIdleMs, totalMs }) (${TIMEOUT_MS / 1000} s each), so every request gets the wrapper's AbortSignal and every body is watched at the transport by its dispatcher tap; AbortSignal.timeout = fetch(url, { signal: AbortSignal.timeout(${TIMEOUT_MS}) }); fetch+signal = fetch(url, { signal: new AbortController().signal }) with no timer at all: the floor of any design that can abort a request, since fetch does per-request work for every signal it is given (a listener, a WeakRef and a FinalizationRegistry entry in its Request).`;
    rps = await alternate(rpsCandidates(server.url, cpuSamples), RPS_ROUNDS);
    record(scenarios, {
      id: 'requests-per-second',
      title: 'Requests per second against a local server',
      unit: 'req/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare fetch',
      results: rps,
      target: { ratio: 0.98 },
      note: `${rpsSetup} Wall-clock throughput; on a shared, loaded machine single samples vary by tens of percent, so read it with the CPU figure below. Target: >= 0.98x bare fetch.`,
    });
    record(scenarios, {
      id: 'requests-per-second-vs-timeout',
      title: 'Requests per second against a local server, against AbortSignal.timeout',
      unit: 'req/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'AbortSignal.timeout',
      results: rps,
      target: { ratio: 1 },
      note: `The same samples as requests-per-second, compared with fetch(url, { signal: AbortSignal.timeout(${TIMEOUT_MS}) }). Target: at least its throughput (ratio >= 1).`,
    });
    record(scenarios, {
      id: 'client-cpu-per-request',
      title: 'Client CPU per request against a local server',
      unit: 'us',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'bare fetch',
      results: summarize(cpuSamples),
      target: { ratio: 0.98 },
      note: `The same samples as requests-per-second: user+system CPU of the client process per request (fetch, the wrapper, garbage collection). Target as for throughput: ratio >= 0.98. Compare with fetch+signal, the floor of any design that hands fetch a signal (needed for fetch itself to end a timed-out body with the TimeoutError).`,
    });
  } finally {
    await server.stop();
  }
  // Issue 26: client instructions per real request, beside the wall-clock rows (lib/fetch-instructions.mjs).
  const instructions =
    process.env.BENCH_INSTRUCTIONS === '0'
      ? undefined
      : await fetchInstructions(process.execPath, INSTRUCTION_SHORT, INSTRUCTION_LONG);
  if (instructions !== undefined) {
    record(scenarios, {
      id: 'client-instructions-per-request',
      title: 'Client instructions per request against a local server (cachegrind)',
      unit: 'instructions',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'AbortSignal.timeout',
      floor: 'bare fetch',
      results: instructions,
      target: { ratio: 1 },
      note: `Instructions of the client process under valgrind --tool=cachegrind, (run of ${INSTRUCTION_LONG} requests - run of ${INSTRUCTION_SHORT}) / ${INSTRUCTION_LONG - INSTRUCTION_SHORT}, each after ${INSTRUCTION_WARMUP} warm-up requests (past fetch's own tiering up, which otherwise dominates the difference), with node --initial-old-space-size=${OLD_SPACE_MB} --predictable-gc-schedule so that no mark-compact lands in either run (whether one did decided the difference; scavenges are counted), one at a time, 512-byte bodies read with text(), against a node:http server in a child process (not counted). tickwheel = withTimeouts(fetch, { headersMs, bodyIdleMs, totalMs }), ${INSTRUCTION_LIMIT_MS} ms each; AbortSignal.timeout = fetch(url, { signal: AbortSignal.timeout(${INSTRUCTION_LIMIT_MS}) }), a limit no run outlasts, so no timer fires while counted. Target (issue 26): at most AbortSignal.timeout's instructions (ratio >= 1).`,
    });
  }
  const copy = compiledOut(['fetch']);
  process.env[COMPILED_OUT_ENV] = copy.dir;
  try {
    const channelsNote = `Each sample in a fresh child process, after a warm-up, a full collection and a second warm-up; CPU time (user+system, collection included) per request. "${CHANNEL_CANDIDATES.compiledOut}" is the same build with every hasSubscribers read replaced by false (lib/channel-candidates.mjs), so the guarded publishing sites vanish; "${CHANNEL_CANDIDATES.noSubscriber}" is the build as shipped; "${CHANNEL_CANDIDATES.bridgeOn}" adds instrumentTickwheel() recording into the SDK's MeterProvider.`;
    const requests = await alternate(channelCandidates('requests'), REPEATS);
    const timeouts = await alternate(channelCandidates('timeouts'), REPEATS);
    record(scenarios, {
      id: 'channels-unused-requests',
      title: 'Diagnostics channels with no subscriber: whole wrapper per completed request',
      unit: 'ns',
      higherIsBetter: false,
      subject: CHANNEL_CANDIDATES.noSubscriber,
      baseline: CHANNEL_CANDIDATES.compiledOut,
      results: requests,
      target: { ratio: 0.99 },
      note: `withTimeouts(stub, { totalMs }) as in wrapper-cpu-total, ${(STUB_BATCH * STUB_BATCHES).toLocaleString('en-US')} sequential requests per sample. A completed request reads one channel (whether to capture its context). ${channelsNote} Target: within 1% of the compiled-out build (ratio >= 0.99).`,
    });
    record(scenarios, {
      id: 'channels-unused-timeouts',
      title: 'Diagnostics channels with no subscriber: per request that times out',
      unit: 'ns',
      higherIsBetter: false,
      subject: CHANNEL_CANDIDATES.noSubscriber,
      baseline: CHANNEL_CANDIDATES.compiledOut,
      results: timeouts,
      target: { ratio: 0.99 },
      note: `${CHANNEL_REQUESTS.toLocaleString('en-US')} requests to a stub that never answers, headersMs 1 on a ManualClock wheel, all timed out by one advance(): each reads the timeout channel once more, the wheel its wake-up channel once. ${channelsNote} Target: within 1% (ratio >= 0.99).`,
    });
    record(scenarios, {
      id: 'channels-bridge-requests',
      title: 'OpenTelemetry bridge on: whole wrapper per completed request (informational)',
      unit: 'ns',
      higherIsBetter: false,
      subject: CHANNEL_CANDIDATES.bridgeOn,
      baseline: CHANNEL_CANDIDATES.noSubscriber,
      results: requests,
      note: `The samples of channels-unused-requests. With a subscriber, each request captures its async context (AsyncLocalStorage.snapshot) so that a timeout can be published in it.`,
    });
    record(scenarios, {
      id: 'channels-bridge-timeouts',
      title: 'OpenTelemetry bridge on: per request that times out (informational)',
      unit: 'ns',
      higherIsBetter: false,
      subject: CHANNEL_CANDIDATES.bridgeOn,
      baseline: CHANNEL_CANDIDATES.noSubscriber,
      results: timeouts,
      note: `The samples of channels-unused-timeouts. With the bridge on, each timeout also builds its message, is published in the request's context and recorded in a counter and a histogram (attributes: package, phase, method, server).`,
    });
  } finally {
    copy.remove();
  }
  console.log(`  shared wheel after the run: ${sharedWheel().size} pending timers`);
  console.log(`  (fetch suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  // Issue 18: what the diagnostics channels cost here, in instructions (lib/channel-overhead.mjs).
  scenarios.push(...(await channelInstructionScenarios('fetch')));
  return { scenarios };
}

/** This file's child modes: the local server and the samples taken in a fresh process. */
const CHILD_MODES = {
  '--server': serverMain,
  '--rps': rpsChildMain,
  '--channels': channelChildMain,
  '--cpu': cpuChildMain,
  '--heap': heapChildMain,
};

/**
 * Where the suite's figures come from, run by hand: `--ablation [variant,...] [shortN] [longN]`
 * counts the steps between bare fetch and the wrapper (lib/fetch-ablation.mjs); `--profile
 * [--node N] [requests]` profiles the throughput loop against the local server (lib/fetch-profile.mjs).
 */
async function analysisMain(mode, args) {
  // Loaded only here, so that no measuring process carries their modules.
  const { fetchAblation } = await import('../lib/fetch-ablation.mjs');
  const { profileWrapper } = await import('../lib/fetch-profile.mjs');
  const { nodeBinary } = await import('../lib/runtimes.mjs');
  if (mode === '--ablation') {
    await fetchAblation(args[0]?.split(','), Number(args[1] ?? 1_000), Number(args[2] ?? 3_000));
    return;
  }
  const at = args.indexOf('--node');
  const node = at >= 0 ? nodeBinary(Number(args.splice(at, 2)[1])) : process.execPath;
  const server = await startServer();
  try {
    await profileWrapper(server.url, { node, count: Number(args[0] ?? 8_000) });
  } finally {
    await server.stop();
  }
}

if (isMain(import.meta.url) && process.argv[2] in CHILD_MODES) {
  await CHILD_MODES[process.argv[2]](process.argv[3], process.argv[4]);
} else if (isMain(import.meta.url) && ['--ablation', '--profile'].includes(process.argv[2])) {
  await analysisMain(process.argv[2], process.argv.slice(3));
} else if (isMain(import.meta.url)) {
  await runSuite('fetch', run, { repeats: REPEATS });
  process.exit(0);
}
