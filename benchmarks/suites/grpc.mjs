/**
 * The grpc suite: @tickwheel/grpc's interceptors against bare grpc-js timing its own `deadline`
 * call option (one `setTimeout` per call on the client, and one per call on the server for the
 * grpc-timeout header), all in this one process run over loopback, candidates alternating round
 * by round:
 *
 * - `bare`: no interceptors; every call passes `{ deadline: Date.now() + 30 s }`;
 * - `tickwheel`: `deadlineInterceptor({ timeoutMs: 30 s })` on the client and
 *   `serverDeadlineInterceptor()` on the server (an ambient deadline per handler; the handler
 *   here never reads its signal, so no AbortController is made; first in the server's list, it
 *   replaces grpc-js's own server timer);
 * - `tickwheel-client`: the client interceptor only, against a bare server: the like-for-like
 *   replacement of the `deadline` option.
 *
 * Measured: unary calls per second (wall clock and CPU time), heap per call held in flight, and
 * bytes allocated per call (garbage included), which stays steady however loaded the machine is.
 * Each candidate has its own server and client (one HTTP/2 connection each), set up once and
 * warmed up. Client and server share this process, so each figure includes both sides' cost.
 * Messages are raw bytes (identity serializers), so protobuf work does not dilute the deadline
 * machinery's share. The server interceptor's ambient deadline uses AsyncLocalStorage, whose
 * async hooks Node 20 keeps on for the whole process once used: every candidate runs with them
 * after the first `tickwheel` round, as in any app that uses AsyncLocalStorage-based tooling.
 *
 *   node --expose-gc suites/grpc.mjs          # or: npm run bench -- grpc
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 12).
 */
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import * as grpc from '@grpc/grpc-js';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { alternate, gc, median, printScenario, scenario, writeResults } from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 12);
/** Calls kept in flight by the throughput workers. */
const CONCURRENCY = 32;
/** How long one throughput sample runs, after SETTLE_MS of calls that are not counted. */
const SAMPLE_MS = 700;
const SETTLE_MS = 300;
/** Calls held open (the server does not answer yet) for one heap sample. */
const IN_FLIGHT = 1_000;
/** Calls per allocation sample. */
const ALLOC_CALLS = 3_000;
const DEADLINE_MS = 30_000;

const identity = (value) => value;
const ECHO = {
  path: '/bench.Bench/Echo',
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
};
const SERVICE = { Echo: ECHO };
const BenchClient = grpc.makeGenericClientConstructor(SERVICE, 'Bench');
const PAYLOAD = Buffer.alloc(32, 7);

/**
 * One candidate: a server whose handler answers at once, or holds the call while `holding`,
 * and a connected client.
 */
async function candidate(serverInterceptors, clientInterceptors, callOptions) {
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

  const call = () =>
    new Promise((resolve, reject) =>
      client.Echo(PAYLOAD, callOptions(), (err, res) => (err ? reject(err) : resolve(res))),
    );

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
    /** Bytes of heap per call in flight: IN_FLIGHT calls held open, heap compared after full GCs. */
    async heapPerCall() {
      gc();
      const before = process.memoryUsage().heapUsed;
      holding = true;
      const outcomes = [];
      for (let i = 0; i < IN_FLIGHT; i++) outcomes.push(call());
      while (held.length < IN_FLIGHT) await new Promise((resolve) => setTimeout(resolve, 5));
      gc();
      const after = process.memoryUsage().heapUsed;
      holding = false;
      for (const callback of held.splice(0)) callback(null, PAYLOAD);
      await Promise.all(outcomes);
      return (after - before) / IN_FLIGHT;
    },
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

export async function run() {
  const bareOptions = () => ({ deadline: Date.now() + DEADLINE_MS });
  const noOptions = () => ({});
  const candidates = {
    bare: await candidate([], [], bareOptions),
    tickwheel: await candidate(
      [serverDeadlineInterceptor()],
      [deadlineInterceptor({ timeoutMs: DEADLINE_MS })],
      noOptions,
    ),
    'tickwheel-client': await candidate([], [deadlineInterceptor({ timeoutMs: DEADLINE_MS })], noOptions),
  };
  // Warm-up: JIT, connection windows, and the first heap growth.
  for (const c of Object.values(candidates)) {
    await c.throughput();
    await c.heapPerCall();
  }

  const perCpuSecond = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  const throughput = await alternate(
    Object.fromEntries(
      Object.entries(candidates).map(([name, c]) => [
        name,
        async () => {
          const { wall, cpu } = await c.throughput();
          perCpuSecond[name].push(cpu);
          return wall;
        },
      ]),
    ),
    REPEATS,
  );
  const throughputCpu = Object.fromEntries(
    Object.entries(perCpuSecond).map(([name, s]) => [name, { median: median(s), samples: s }]),
  );
  const heap = await alternate(
    Object.fromEntries(Object.entries(candidates).map(([name, c]) => [name, () => c.heapPerCall()])),
    REPEATS,
  );
  const allocated = await alternate(
    Object.fromEntries(Object.entries(candidates).map(([name, c]) => [name, () => c.allocatedPerCall()])),
    REPEATS,
  );
  for (const c of Object.values(candidates)) c.close();

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

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { scenarios } = await run();
  for (const sc of scenarios) printScenario(sc);
  const file = writeResults('grpc', { scenarios, command: 'npm run bench -- grpc', repeats: REPEATS });
  console.log(`wrote ${file}`);
}
