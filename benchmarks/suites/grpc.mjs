/**
 * The grpc suite: @tickwheel/grpc's interceptors against bare grpc-js timing its own `deadline`
 * call option (one `setTimeout` per call on the client, and one per call on the server for the
 * grpc-timeout header), over loopback, candidates alternating round by round:
 *
 * - `bare`: no interceptors; every call passes `{ deadline: Date.now() + 60 s }`;
 * - `tickwheel`: `deadlineInterceptor({ timeoutMs: 60 s })` on the client and
 *   `serverDeadlineInterceptor()` on the server (an ambient deadline per handler; the handler
 *   here never reads its signal, so no AbortController is made; first in the server's list, it
 *   replaces grpc-js's own server timer);
 * - `tickwheel-client`: the client interceptor only, against a bare server: the like-for-like
 *   replacement of the `deadline` option;
 * - `bare-als` (throughput only): `bare` in a process that has entered an AsyncLocalStorage once,
 *   as any app with ALS-based tracing or logging has. On Node 20 and 22 that switches on async
 *   hooks for every promise and resource of the process, which the server interceptor's ambient
 *   deadline cannot avoid: its ratio to `bare` is the floor of any ALS-based ambient deadline
 *   there. On Node 24 and later (AsyncContextFrame) it costs nothing.
 * - `traced` (one worker holding two candidates): `bare-als` and `tickwheel` side by side in ONE
 *   process that has entered a tracer's AsyncLocalStorage, every call made inside a `run()` of it
 *   as a traced client makes it inside its span: the same-process baseline of issue 28 ("free in
 *   a traced process"). Both arms share the process's async hooks (Node 20 and 22) and its heap,
 *   so what differs between them is the interceptors alone (on Node 20 and 22 the bare arm's
 *   resources then carry tickwheel's store too; the instruction count's bare-als process never
 *   loads tickwheel). Its instruction count per call
 *   (lib/grpc-instructions.mjs, cachegrind) is the deciding figure: it does not move with load.
 * - `als-floor` (heap only): `bare` with the least server interceptor that gives handlers an
 *   ambient store: one object per call implementing grpc-js's call interface, running the
 *   half-close in an AsyncLocalStorage `run()`. What it holds over `bare` is the floor of any
 *   interceptor with an ALS-based ambient deadline (on Node 20 and 22, the store's slot on every
 *   async resource, grpc-js's own deadline timers included).
 *
 * Each candidate lives in its own worker process (this file with `--worker <name>`), holding its
 * server and client (one HTTP/2 connection) for the whole run; the parent only tells the workers
 * in turn what to measure, so one round runs bare, tickwheel, tickwheel-client one after another
 * and no two measure at once. A process per candidate keeps what one candidate does out of the
 * others' figures: its heap and garbage, and on Node 20 and 22 the process-wide async hooks that
 * AsyncLocalStorage (the server interceptor's ambient deadline) switches on at first use, which
 * would otherwise slow every candidate of a shared process, bare grpc-js included. Client and
 * server share their worker, so each figure includes both sides of the call.
 *
 * Measured: unary calls per second (wall clock) and per CPU-second of the worker (user + system,
 * `process.cpuUsage()`, which other load on the machine disturbs far less), heap per call held
 * in flight (the slope between IN_FLIGHT and 2 x IN_FLIGHT held calls after full GCs, so costs
 * paid once, such as compiled code or grown HTTP/2 windows, cancel out), and bytes allocated
 * per call (garbage included). Messages are raw bytes (identity serializers), so protobuf work
 * does not dilute the deadline machinery's share.
 *
 *   node --expose-gc suites/grpc.mjs          # or: npm run bench -- grpc
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 11); BENCH_INSTRUCTIONS=0
 * skips the cachegrind count (minutes per runtime).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import * as grpc from '@grpc/grpc-js';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { ECHO_SERVICE, grpcInstructions, tracer, WARMUP as INSTRUCTION_WARMUP } from '../lib/grpc-instructions.mjs';
import {
  alternate,
  forkWorker,
  gc,
  heapAfterGc,
  isMain,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
} from '../lib/harness.mjs';

const SELF = fileURLToPath(import.meta.url);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 11);
/** Calls kept in flight by the throughput workers. */
const CONCURRENCY = 32;
/** How long one throughput sample runs, after SETTLE_MS of calls that are not counted. */
const SAMPLE_MS = 1_000;
const SETTLE_MS = 300;
/** Calls held open (the server does not answer yet) for one heap sample; the sample holds twice as many. */
const IN_FLIGHT = 1_000;
/** Calls per allocation sample. */
const ALLOC_CALLS = 2_000;
/** Long enough that no held call times out while a loaded machine sets up the next ones. */
const DEADLINE_MS = 60_000;
const CANDIDATES = ['bare', 'tickwheel', 'tickwheel-client', 'bare-als'];
/** The candidates of the heap and allocation scenarios. */
const MEMORY_CANDIDATES = ['bare', 'tickwheel', 'tickwheel-client'];
/** The heap scenario adds the ALS floor. */
const HEAP_CANDIDATES = [...MEMORY_CANDIDATES, 'als-floor'];
/** The arms of the `traced` worker: one process, a tracer's AsyncLocalStorage in use. */
const TRACED_ARMS = ['bare-als', 'tickwheel'];
/** Every worker the run starts. */
const WORKERS = [...CANDIDATES, 'als-floor', 'traced'];
/** Calls in the short and the long cachegrind run of the instruction count. */
const INSTRUCTION_SHORT = 500;
const INSTRUCTION_LONG = 2_000;

const SERVICE = ECHO_SERVICE;
const BenchClient = grpc.makeGenericClientConstructor(SERVICE, 'Bench');
const PAYLOAD = Buffer.alloc(32, 7);

/** The ALS floor's store: one for every call, as the floor is about the run, not the store's size. */
const FLOOR_STORE = { ambient: true };
const floorStorage = new AsyncLocalStorage();
function deliverHalfClose(listener) {
  listener.onReceiveHalfClose();
}

/**
 * The `als-floor` candidate's server call: the least a server interceptor can hold per call to
 * run the handler in an ambient store (grpc-js only uses an interceptor's result through its
 * call interface, as @tickwheel/grpc's server call does).
 */
class AlsFloorCall {
  constructor(next) {
    this.next = next;
    this.listener = undefined;
  }
  start(listener) {
    this.listener = listener;
    this.next.start(this);
  }
  sendMetadata(metadata) {
    this.next.sendMetadata(metadata);
  }
  sendMessage(message, callback) {
    this.next.sendMessage(message, callback);
  }
  sendStatus(status) {
    this.next.sendStatus(status);
  }
  getDeadline() {
    return this.next.getDeadline();
  }
  startRead() {
    this.next.startRead();
  }
  getPeer() {
    return this.next.getPeer();
  }
  getHost() {
    return this.next.getHost();
  }
  getAuthContext() {
    return this.next.getAuthContext();
  }
  getConnectionInfo() {
    return this.next.getConnectionInfo();
  }
  getMetricsRecorder() {
    return this.next.getMetricsRecorder();
  }
  onReceiveMetadata(metadata) {
    this.listener.onReceiveMetadata(metadata);
  }
  onReceiveMessage(message) {
    this.listener.onReceiveMessage(message);
  }
  onReceiveHalfClose() {
    floorStorage.run(FLOOR_STORE, deliverHalfClose, this.listener);
  }
  onCancel() {
    this.listener.onCancel();
  }
}

/**
 * One candidate: a server whose handler answers at once, or holds the call while `holding`,
 * and a connected client. A `traced` candidate makes each call inside a `run()` of the tracer.
 */
async function candidate(name, traced = false) {
  // Only a tickwheel worker loads the package: the bare one runs grpc-js alone, as its users do.
  const tickwheel = name.startsWith('bare') || name === 'als-floor' ? undefined : await import('@tickwheel/grpc');
  if (name === 'bare-als' && !traced) new AsyncLocalStorage().run(true, () => undefined);
  const serverInterceptors =
    name === 'tickwheel'
      ? [tickwheel.serverDeadlineInterceptor()]
      : name === 'als-floor'
        ? [(_method, call) => new AlsFloorCall(call)]
        : [];
  const clientInterceptors = tickwheel ? [tickwheel.deadlineInterceptor({ timeoutMs: DEADLINE_MS })] : [];
  const callOptions = tickwheel ? () => ({}) : () => ({ deadline: Date.now() + DEADLINE_MS });
  const held = [];
  let holding = false;
  const server = new grpc.Server({ interceptors: serverInterceptors });
  server.addService(SERVICE, {
    Echo(call, callback) {
      if (holding) held.push(callback);
      else callback(null, call.request);
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const client = new BenchClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    interceptors: clientInterceptors,
  });
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 5_000, (err) => (err ? reject(err) : resolve())),
  );

  const send = (resolve, reject) =>
    client.Echo(PAYLOAD, callOptions(), (err, res) => (err ? reject(err) : resolve(res)));
  const call = traced ? () => tracer.run({ span: 1 }, () => new Promise(send)) : () => new Promise(send);

  return {
    /**
     * Unary calls per second with CONCURRENCY workers for SAMPLE_MS, by the wall clock and per
     * second of this process's CPU time (user + system). The second is what the code costs; it
     * moves far less than the first when other processes load the machine.
     */
    async throughput() {
      let done = 0;
      let cpu0;
      let t0 = 0;
      const settleUntil = performance.now() + SETTLE_MS;
      const until = settleUntil + SAMPLE_MS;
      const worker = async () => {
        while (performance.now() < until) {
          await call();
          if (cpu0 === undefined && performance.now() >= settleUntil) {
            // Steady state reached (the heap has regrown after the harness's full GC): start counting.
            cpu0 = process.cpuUsage();
            t0 = performance.now();
          } else if (cpu0 !== undefined) done++;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      return { wall: (done / wallMs) * 1000, cpu: (done / (cpu.user + cpu.system)) * 1e6 };
    },
    /**
     * Bytes allocated per completed unary call, garbage included: the heap growth between the
     * garbage collections of ALLOC_CALLS calls, added up with v8.GCProfiler. Unlike calls/s it
     * barely moves when other processes load the machine.
     */
    async allocatedPerCall() {
      gc();
      const profiler = new v8.GCProfiler();
      let previous = v8.getHeapStatistics().used_heap_size;
      profiler.start();
      let left = ALLOC_CALLS;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (left-- > 0) await call();
        }),
      );
      const { statistics } = profiler.stop();
      let allocated = 0;
      for (const { beforeGC, afterGC } of statistics) {
        allocated += beforeGC.heapStatistics.usedHeapSize - previous;
        previous = afterGC.heapStatistics.usedHeapSize;
      }
      allocated += v8.getHeapStatistics().used_heap_size - previous;
      return allocated / ALLOC_CALLS;
    },
    /**
     * Bytes of heap per call in flight: the heap after full GCs with IN_FLIGHT calls held open,
     * then with 2 x IN_FLIGHT, divided by the IN_FLIGHT calls between them.
     */
    async heapPerCall() {
      const outcomes = [];
      const holdMore = async () => {
        const target = held.length + IN_FLIGHT;
        for (let i = 0; i < IN_FLIGHT; i++) outcomes.push(call());
        while (held.length < target) await sleep(5);
        return heapAfterGc();
      };
      holding = true;
      const first = await holdMore();
      const second = await holdMore();
      holding = false;
      for (const callback of held.splice(0)) callback(null, PAYLOAD);
      await Promise.all(outcomes);
      return (second - first) / IN_FLIGHT;
    },
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

/** A worker process holding one candidate; `measure(kind)` runs one sample there. */
function worker(name) {
  const w = forkWorker(SELF, ['--worker', name], { label: `grpc worker ${name}` });
  // The first answer says the worker is listening; 'ready' then warms it up.
  return { ready: () => w.ready.then(() => w.ask('ready')), measure: w.ask, close: () => w.close() };
}

/**
 * Worker side: set up the candidate (both arms for `traced`), then answer the parent's requests
 * one at a time: `<kind>` for a one-candidate worker, `<kind> <arm>` for `traced`.
 */
async function serveWorker(name) {
  const arms = {};
  if (name === 'traced') {
    tracer.enterWith({ span: 0 });
    for (const arm of TRACED_ARMS) arms[arm] = await candidate(arm, true);
  } else {
    arms[''] = await candidate(name);
  }
  const kinds = {
    ready: async () => {
      // Warm-up: JIT, connection windows, and the first heap growth.
      for (const c of Object.values(arms)) {
        await c.throughput();
        await c.heapPerCall();
      }
      return true;
    },
  };
  for (const [arm, c] of Object.entries(arms)) {
    const suffix = arm === '' ? '' : ` ${arm}`;
    kinds[`throughput${suffix}`] = () => c.throughput();
    kinds[`heap${suffix}`] = () => c.heapPerCall();
    kinds[`allocated${suffix}`] = () => c.allocatedPerCall();
  }
  // A full collection before each sample, so that none pays for the garbage of the one before.
  const collected = Object.fromEntries(
    Object.entries(kinds).map(([kind, measure]) => [
      kind,
      () => {
        gc();
        return measure();
      },
    ]),
  );
  serveParent(collected, {
    hello: 'up',
    close: () => {
      for (const c of Object.values(arms)) c.close();
    },
  });
}

export async function run() {
  const workers = Object.fromEntries(WORKERS.map((name) => [name, worker(name)]));
  try {
    // One at a time, like every measurement: warming up is a measurement's load too.
    for (const w of Object.values(workers)) await w.ready();
    return await measureAll(workers);
  } finally {
    await Promise.all(Object.values(workers).map((w) => w.close()));
  }
}

async function measureAll(workers) {
  const each = (kind, pick = (value) => value, names = CANDIDATES) =>
    Object.fromEntries(names.map((name) => [name, async () => pick(await workers[name].measure(kind), name)]));
  const perCpuSecond = Object.fromEntries(CANDIDATES.map((name) => [name, []]));
  const throughput = await alternate(
    each('throughput', ({ wall, cpu }, name) => {
      perCpuSecond[name].push(cpu);
      return wall;
    }),
    REPEATS,
  );
  const throughputCpu = summarize(perCpuSecond);
  const heap = await alternate(each('heap', undefined, HEAP_CANDIDATES), REPEATS);
  const allocated = await alternate(each('allocated', undefined, MEMORY_CANDIDATES), REPEATS);
  // Issue 28: the two arms of one traced process, alternating as the candidates do.
  const tracedArms = (kind, pick = (value) => value) =>
    Object.fromEntries(
      TRACED_ARMS.map((arm) => [arm, async () => pick(await workers.traced.measure(`${kind} ${arm}`), arm)]),
    );
  const tracedPerCpuSecond = Object.fromEntries(TRACED_ARMS.map((arm) => [arm, []]));
  const tracedThroughput = await alternate(
    tracedArms('throughput', ({ wall, cpu }, arm) => {
      tracedPerCpuSecond[arm].push(cpu);
      return wall;
    }),
    REPEATS,
  );
  const tracedThroughputCpu = summarize(tracedPerCpuSecond);
  const tracedHeap = await alternate(tracedArms('heap'), REPEATS);
  const tracedInstructions =
    process.env.BENCH_INSTRUCTIONS === '0'
      ? undefined
      : grpcInstructions(process.execPath, INSTRUCTION_SHORT, INSTRUCTION_LONG);

  const scenarios = [
    scenario({
      id: 'unary-throughput',
      title: `Unary calls/s, ${CONCURRENCY} in flight, client and server interceptors vs grpc-js deadline option`,
      unit: 'calls/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare',
      results: throughput,
      target: { ratio: 0.98 },
      note: 'Wall clock. tickwheel-client: the client interceptor alone against a bare server.',
    }),
    scenario({
      id: 'unary-throughput-cpu',
      title: `Unary calls per CPU-second, ${CONCURRENCY} in flight, client and server interceptors vs grpc-js deadline option`,
      unit: 'calls/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare',
      results: throughputCpu,
      target: { ratio: 0.97 },
      note: "Calls completed per second of this process's CPU time: less disturbed by other load on the machine.",
    }),
    scenario({
      id: 'unary-throughput-client-only',
      title: `Unary calls/s, ${CONCURRENCY} in flight, client interceptor only vs grpc-js deadline option`,
      unit: 'calls/s',
      higherIsBetter: true,
      subject: 'tickwheel-client',
      baseline: 'bare',
      results: throughput,
      target: { ratio: 0.97 },
    }),
    scenario({
      id: 'unary-throughput-cpu-client-only',
      title: `Unary calls per CPU-second, ${CONCURRENCY} in flight, client interceptor only vs grpc-js deadline option`,
      unit: 'calls/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel-client',
      baseline: 'bare',
      results: throughputCpu,
      target: { ratio: 0.97 },
    }),
    scenario({
      id: 'unary-throughput-cpu-als-floor',
      title: `Unary calls per CPU-second, ${CONCURRENCY} in flight, bare grpc-js in a process that uses AsyncLocalStorage vs one that does not`,
      unit: 'calls/CPU-s',
      higherIsBetter: true,
      subject: 'bare-als',
      baseline: 'bare',
      results: throughputCpu,
      note: 'No interceptor: the cost of AsyncLocalStorage alone (process-wide async hooks on Node 20 and 22), which bounds what any ALS-based ambient deadline can reach.',
    }),
    scenario({
      id: 'unary-throughput-cpu-traced',
      title: `Unary calls per CPU-second, ${CONCURRENCY} in flight, client and server interceptors vs grpc-js deadline option, both in one process that uses AsyncLocalStorage`,
      unit: 'calls/CPU-s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare-als',
      results: tracedThroughputCpu,
      target: { ratio: 0.97 },
      note: "The fair baseline for an ALS-based ambient deadline (issue 28): every traced service (OpenTelemetry's context manager) already pays for AsyncLocalStorage. Both arms live in one worker that entered a tracer's AsyncLocalStorage, each call inside a run() of it; CPU time of the whole worker while one arm runs. Decided by the instruction count below, which load does not move.",
    }),
    scenario({
      id: 'unary-throughput-traced',
      title: `Unary calls/s, ${CONCURRENCY} in flight, client and server interceptors vs grpc-js deadline option, both in one process that uses AsyncLocalStorage`,
      unit: 'calls/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      baseline: 'bare-als',
      results: tracedThroughput,
      note: 'Wall clock, the same samples as the calls per CPU-second row above.',
    }),
    ...(tracedInstructions === undefined
      ? []
      : [
          scenario({
            id: 'unary-instructions-traced',
            title: `Instructions per unary call (client and server, one call at a time), client and server interceptors vs grpc-js deadline option, both in a process that uses AsyncLocalStorage (cachegrind)`,
            unit: 'instructions',
            higherIsBetter: false,
            subject: 'tickwheel',
            baseline: 'bare-als',
            results: tracedInstructions,
            target: { ratio: 0.97 },
            note: `Instructions of one process holding client and server, under valgrind --tool=cachegrind: (run of ${INSTRUCTION_LONG} calls - run of ${INSTRUCTION_SHORT}) / ${INSTRUCTION_LONG - INSTRUCTION_SHORT}, after ${INSTRUCTION_WARMUP} warm-up calls, one call at a time (lib/grpc-instructions.mjs). The process enters a tracer's AsyncLocalStorage first and makes each call inside a run() of it; bare-als never loads @tickwheel/grpc. Target (issue 28): at least 0.97x bare's calls per CPU-second, i.e. at most bare's instructions / 0.97.`,
          }),
          scenario({
            id: 'unary-instructions-traced-floor',
            title: `Instructions per unary call (client and server, one call at a time), interceptors that do nothing plus a second AsyncLocalStorage vs grpc-js deadline option, both in a process that uses AsyncLocalStorage (cachegrind)`,
            unit: 'instructions',
            higherIsBetter: false,
            subject: 'floor-als',
            baseline: 'bare-als',
            results: tracedInstructions,
            note: `The floor under the row above, from the same runs: bare-als's calls through a client interceptor (options, next) => next(options) and a server interceptor (method, call) => call, in a process where a second AsyncLocalStorage is switched on, as tickwheel's ambient store is. No interceptor design that gives handlers an ambient deadline of its own can count fewer; lib/grpc-ablation.mjs splits it into the interceptors' part and the second store's.`,
          }),
        ]),
    scenario({
      id: 'heap-per-in-flight-call-traced',
      title: `Heap bytes per in-flight unary call (${IN_FLIGHT} held open), client and server interceptors vs grpc-js deadline option, both in one process that uses AsyncLocalStorage`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'bare-als',
      results: tracedHeap,
      target: { maxOver: 256 },
      note: "The traced worker above: each held call made inside a run() of the tracer. Client plus server state; the server side includes each handler's ambient deadline.",
    }),
    scenario({
      id: 'heap-per-in-flight-call',
      title: `Heap bytes per in-flight unary call (${IN_FLIGHT} held open), client and server interceptors vs grpc-js deadline option`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'bare',
      results: heap,
      target: { maxOver: 256 },
      note: "Both sides of each call live in this process, so the figure is client plus server state; with the server interceptor it includes each handler's ambient deadline (one wheel handle, no AbortSignal unless the handler reads it), which bare grpc-js does not provide.",
    }),
    scenario({
      id: 'heap-per-in-flight-call-als-floor',
      title: `Heap bytes per in-flight unary call (${IN_FLIGHT} held open), bare grpc-js plus a server interceptor that only enters an AsyncLocalStorage run per call vs bare grpc-js`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'als-floor',
      baseline: 'bare',
      results: heap,
      note: "The floor of an ALS-based ambient deadline: one interceptor object per call and, on Node 20 and 22, the store's slot on every async resource (grpc-js's own deadline Timeouts included, which @tickwheel/grpc's interceptors replace).",
    }),
    scenario({
      id: 'heap-per-in-flight-call-client-only',
      title: `Heap bytes per in-flight unary call (${IN_FLIGHT} held open), client interceptor only vs grpc-js deadline option`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel-client',
      baseline: 'bare',
      results: heap,
      target: { maxOver: 0 },
    }),
    scenario({
      id: 'allocated-per-call',
      title: `Bytes allocated per unary call (${ALLOC_CALLS} calls, ${CONCURRENCY} in flight), client and server interceptors vs grpc-js deadline option`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'bare',
      results: allocated,
      target: { maxOver: 0 },
      note: "Client plus server, garbage included, by v8.GCProfiler. Any grpc-js interceptor costs allocations of its own (the interceptor chain's call objects); the server side includes each handler's ambient deadline.",
    }),
    scenario({
      id: 'allocated-per-call-client-only',
      title: `Bytes allocated per unary call (${ALLOC_CALLS} calls, ${CONCURRENCY} in flight), client interceptor only vs grpc-js deadline option`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel-client',
      baseline: 'bare',
      results: allocated,
      target: { maxOver: 0 },
      note: "Includes the copy of the call's Metadata that carries grpc-timeout (the caller may reuse its own) and grpc-js's interceptor chain; saves grpc-js's own deadline setTimeout.",
    }),
  ];
  // Issue 18: what the diagnostics channels cost here, in instructions (lib/channel-overhead.mjs).
  scenarios.push(...(await channelInstructionScenarios('grpc')));
  return { scenarios };
}

if (isMain(import.meta.url) && process.argv[2] === '--worker') {
  await serveWorker(process.argv[3]);
} else if (isMain(import.meta.url) && process.argv[2] === '--ablation') {
  // Where a traced call's instructions go, one piece of the interceptors' work at a time (lib/grpc-ablation.mjs).
  const { grpcAblation } = await import('../lib/grpc-ablation.mjs');
  grpcAblation(Number(process.argv[3] ?? 500), Number(process.argv[4] ?? 2_000), process.argv[5]?.split(','));
} else if (isMain(import.meta.url)) {
  await runSuite('grpc', run, { repeats: REPEATS, print: true });
}
