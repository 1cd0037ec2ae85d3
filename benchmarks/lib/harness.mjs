/**
 * The one benchmark harness every suite and lib script uses, so that a figure means the same in
 * every suite: worker processes (fork a worker and ask it), instruction counts (re-exported from
 * cachegrind.mjs), memory (V8 heap after full collections; Redis `used_memory`), Redis command
 * counts, waiting, the main-module check, machine details, medians and percentiles, alternating
 * runs of competing candidates, and the results file format.
 *
 * A suite is `suites/<name>.mjs` exporting `async function run(options)` that returns
 * `{ scenarios }` and is executed by `run-all.mjs` (or alone: `node suites/<name>.mjs`).
 * Results go to `results/<name>.json`, one run per Node major (see `writeResults`); `render.mjs`
 * turns all of them into the chart and the README tables, every runtime side by side. Figures
 * are never typed by hand anywhere: they all come from these files.
 */
import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export { countInstructions, instructionsPerOp, valgrindAvailable } from './cachegrind.mjs';

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');

/** What the numbers were measured on. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Forces a full GC when the process runs with --expose-gc (run-all.mjs passes it). */
export function gc() {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
}

/** Resolves after `ms` of wall-clock time: the one way a benchmark waits. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Blocks the thread for `ms` without running anything: no event-loop turn and, unlike a busy
 * loop, no instructions, so a counted kernel can wait for its peer without counting the wait.
 */
export function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Polls `condition()` every `everyMs` until it holds; fails naming `what` (a string, or a function
 * returning one when it fails) once `timeoutMs` has passed without it.
 */
export async function waitUntil(condition, timeoutMs, what, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`${typeof what === 'function' ? what() : what} did not happen within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** Resolves or rejects as `promise` does, or rejects naming `what` once `timeoutMs` has passed first. */
export function withTimeout(promise, timeoutMs, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs `jobs` (functions returning promises), `concurrency` at a time; resolves with their results in order. */
export async function fewAtATime(jobs, concurrency) {
  const results = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return results;
}

/** A small deterministic PRNG (mulberry32) returning floats in [0, 1), so that a run replays. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** This process's CPU time (user + system) in microseconds, since `since` (a `process.cpuUsage()`) or since it started. */
export function cpuMicros(since) {
  const { user, system } = process.cpuUsage(since);
  return user + system;
}

/**
 * True when the module at `moduleUrl` (its `import.meta.url`) is the script node was started
 * with, symbolic links resolved as node resolves its main module.
 */
export function isMain(moduleUrl) {
  const script = process.argv[1];
  if (script === undefined) return false;
  let resolved = path.resolve(script);
  try {
    resolved = fs.realpathSync(resolved);
  } catch {
    // A script path that does not exist is not this module either.
  }
  return resolved === fileURLToPath(moduleUrl);
}

// ---------------------------------------------------------------------------------------------
// Memory.

/** V8 heap in use (`heapUsed`) after full collections (see `gc`). */
export function heapAfterGc() {
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Memory in use after full collections: the V8 heap plus ArrayBuffer backing stores, which live
 * outside the heap (typed arrays: TimerSet's slab, key records and bucket arrays). `gc` collects
 * twice because the backing stores of typed arrays that die in the first collection are freed by
 * a sweeper that may still be running when it returns.
 */
export function memoryAfterGc() {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/**
 * A Redis server's memory through the ioredis client `admin`, after `MEMORY PURGE` has returned
 * the allocator's retained pages: `used` is `used_memory` (what the data takes, the figure of
 * every "Redis bytes per …" row), `rss` is `used_memory_rss` (what the process holds).
 */
export async function usedMemory(admin) {
  await admin.call('MEMORY', 'PURGE');
  const info = await admin.info('memory');
  return {
    used: Number(/used_memory:(\d+)/.exec(info)[1]),
    rss: Number(/used_memory_rss:(\d+)/.exec(info)[1]),
  };
}

/**
 * A Redis server's CPU time so far (`used_cpu_sys + used_cpu_user`), in seconds, through `admin`:
 * anything with ioredis's `info(section)`.
 */
export async function redisCpuSeconds(admin) {
  const info = await admin.info('cpu');
  return Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_user:([\d.]+)/.exec(info)[1]);
}

/** Commands the harness itself sends to measure (INFO, CONFIG RESETSTAT, MEMORY PURGE, FLUSHALL): never counted. */
const MEASURING_COMMANDS = /^(info|config|memory|flushall)/;

/**
 * Commands a Redis server has run (`calls` summed over INFO commandstats), through the ioredis
 * client `admin`, without the harness's own measuring commands (`MEASURING_COMMANDS`): so
 * "commands per timer" counts what the system under test sent, whether or not the run reset
 * the statistics or read them in between.
 */
export async function commandCount(admin) {
  const info = await admin.info('commandstats');
  let total = 0;
  for (const [, name, calls] of info.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g))
    if (!MEASURING_COMMANDS.test(name)) total += Number(calls);
  return total;
}

// ---------------------------------------------------------------------------------------------
// Worker processes: a benchmark forks a worker (a suite or lib script run with its own flag) and
// asks it to do or measure one thing at a time. Messages: the parent sends `{ kind, args }`; the
// worker answers each with `{ value }` or `{ error }`, in order, and may send `{ event }` at any
// time (progress, timers fired) for the parent's `onEvent`. Its first message, `{ value }`, says
// it is ready (a message sent before then could be lost).

/**
 * Forks `script` with `args` as a worker (`--expose-gc` unless `execArgv` says otherwise).
 * @returns `{ child, ready, ask(kind, ...args), close(timeoutMs, lastAsk), exited, kill() }`: `ready`
 *   resolves with the worker's first value; `ask` with the value of its answer (asks queue up, one
 *   at a time); `close` asks `lastAsk` if given (resolving with its value), then disconnects,
 *   which ends the worker, and SIGKILLs it if it is still running after `timeoutMs` (default 10 s).
 */
export function forkWorker(
  script,
  args = [],
  { label = path.basename(script), execArgv = ['--expose-gc'], env, onEvent } = {},
) {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv, env });
  const waiting = [];
  let exitError;
  const settleNext = (message) => {
    const next = waiting.shift();
    if (message.error !== undefined) next?.reject(new Error(`${label}: ${message.error}`));
    else next?.resolve(message.value);
  };
  const ready = new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  ready.catch(() => undefined);
  child.on('message', (message) => {
    if (message !== null && typeof message === 'object' && 'event' in message) onEvent?.(message.event);
    else settleNext(message ?? {});
  });
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exitError = new Error(`${label} exited with ${code ?? signal}`);
      for (const w of waiting.splice(0)) w.reject(exitError);
      resolve(code);
    }),
  );
  const ask = (kind, ...askArgs) =>
    new Promise((resolve, reject) => {
      if (exitError !== undefined) return reject(exitError);
      waiting.push({ resolve, reject });
      child.send({ kind, args: askArgs });
    });
  const close = async (timeoutMs = 10_000, lastAsk = undefined) => {
    if (child.exitCode !== null || child.signalCode !== null) return undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      const value = lastAsk === undefined ? undefined : await ask(lastAsk).catch(() => undefined);
      if (child.connected) child.disconnect();
      await exited;
      return value;
    } finally {
      clearTimeout(timer);
    }
  };
  return { child, ready, ask, close, exited, kill: () => child.kill('SIGKILL') };
}

/**
 * Worker side of `forkWorker`: answers the parent's asks with `kinds[kind](...args)`, one at a
 * time, after sending `hello` as the first value. When the parent disconnects (its `close`, or
 * its exit), runs `close` and exits.
 */
export function serveParent(kinds, { hello = true, close } = {}) {
  let queue = Promise.resolve();
  process.on('message', (message) => {
    queue = queue.then(async () => {
      try {
        const kind = kinds[message.kind];
        if (kind === undefined) throw new Error(`unknown ask ${message.kind}`);
        process.send({ value: await kind(...(message.args ?? [])) });
      } catch (error) {
        process.send({ error: String(error?.stack ?? error) });
      }
    });
  });
  process.on('disconnect', async () => {
    await queue;
    await close?.();
    process.exit(0);
  });
  process.send({ value: hello });
}

/** Worker side: an event for the parent's `onEvent`, between answers. */
export function tellParent(event) {
  process.send({ event });
}

/**
 * Worker side: collects items (timers fired, say) and sends them to the parent's `onEvent` as one
 * array every `everyMs`, and on `flush()`; `stop()` ends the batching with a last flush.
 */
export function eventBatches(everyMs) {
  let batch = [];
  const flush = () => {
    if (batch.length === 0) return;
    tellParent(batch);
    batch = [];
  };
  const timer = setInterval(flush, everyMs);
  return {
    push: (...items) => batch.push(...items),
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}

/**
 * Worker side of `childValue`: sends `value` as the one answer and exits once it is sent; run by
 * hand (no parent listening), prints it as JSON instead.
 */
export function answerParent(value) {
  if (process.send === undefined) {
    process.stdout.write(`${JSON.stringify(value)}\n`, () => process.exit(0));
    return;
  }
  process.send({ value }, () => process.exit(0));
}

/**
 * Runs `script` with `args` in a fresh worker that measures one thing, sends it with
 * `answerParent` and exits; resolves with that value once the worker has exited.
 */
export async function childValue(script, args = [], options = {}) {
  const worker = forkWorker(script, args, options);
  const [value] = await Promise.all([worker.ready, worker.exited]);
  return value;
}

/** `{ name: [sample] }` -> `{ name: { median, samples } }`: the results shape of a scenario. */
export function summarize(samples) {
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { median: median(s), samples: s }]));
}

/**
 * Runs each candidate `rounds` times, alternating them (A B C A B C ...) so that drift in the
 * machine's load hits all of them alike, and returns every sample plus the median.
 *
 * @param candidates - `{ name: async () => number }`, each returning one measurement
 * @returns `{ name: { median, samples } }`
 */
export async function alternate(candidates, rounds) {
  const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    // Rotate the starting candidate each round so none always runs first.
    const names = Object.keys(candidates);
    const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
    for (const name of order) {
      gc();
      samples[name].push(await candidates[name]());
    }
  }
  return summarize(samples);
}

/**
 * Builds one scenario record. `ratio` is always "how many times better the subject is than the
 * baseline": baseline/subject for lower-is-better units, subject/baseline otherwise.
 *
 * @param spec.target - `{ ratio }` (subject must be at least that many times better),
 *   `{ max }` (subject's median must be at most this, in `unit`), or `{ maxOver: n }`
 *   (subject's median must be at most the baseline's plus n, in `unit`)
 * @param spec.floor - the candidate that is the floor (lib/floor-list.mjs): the record then
 *   carries `costOverFloor`, how many times the floor's cost the subject pays (1 = no overhead)
 * @param spec.peers - `{ candidate: label }`: the candidates a user would use instead of the
 *   subject; the root README shows the subject's ratio against each (lib/render-headline.mjs)
 */
export function scenario({ id, title, unit, higherIsBetter, subject, baseline, results, target, note, floor, peers }) {
  const s = results[subject]?.median;
  const b = baseline === undefined ? undefined : results[baseline]?.median;
  let ratio = null;
  if (b !== undefined && s !== undefined && s !== 0 && b !== 0) ratio = higherIsBetter ? s / b : b / s;
  const f = floor === undefined ? undefined : results[floor]?.median;
  const costOverFloor = f > 0 && s > 0 ? (higherIsBetter ? f / s : s / f) : undefined;
  let met = null;
  if (target?.ratio !== undefined && ratio !== null) met = ratio >= target.ratio;
  if (target?.max !== undefined) met = s <= target.max;
  if (target?.maxOver !== undefined && b !== undefined) met = s <= b + target.maxOver;
  // A multiple of the floor's cost in the same run (issue 30's instruction targets).
  if (target?.maxOverFloor !== undefined && costOverFloor !== undefined) met = costOverFloor <= target.maxOverFloor;
  return {
    id,
    title,
    unit,
    higherIsBetter,
    subject,
    baseline: baseline ?? null,
    results,
    ratio,
    target: target ?? null,
    met,
    note: note ?? null,
    ...(costOverFloor === undefined ? {} : { floor, costOverFloor }),
    // What a user would use instead, candidate -> label: the root README's rows (render-headline.mjs).
    ...(peers === undefined ? {} : { peers }),
  };
}

/**
 * Which build of a workspace package (`@tickwheel/core`) was measured: its commit and branch,
 * whether its folder had changes not yet committed, and when its dist was built (the newest
 * `.js` file); null where git cannot say.
 */
export function packageProvenance(specifier) {
  const distEntry = createRequire(import.meta.url).resolve(specifier);
  const distDir = path.dirname(distEntry);
  const git = (...args) => {
    try {
      return execFileSync('git', args, {
        cwd: path.dirname(distDir),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return null;
    }
  };
  const status = git('status', '--porcelain', '--', '.');
  const built = fs
    .readdirSync(distDir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => fs.statSync(path.join(distDir, f)).mtimeMs);
  return {
    commit: git('rev-parse', 'HEAD'),
    branch: git('rev-parse', '--abbrev-ref', 'HEAD'),
    uncommittedChanges: status === null ? null : status.length > 0,
    distBuiltAt: new Date(Math.max(...built)).toISOString(),
  };
}

/** The Node.js runtime this process is: what a results run is keyed by. */
export function runtimeInfo() {
  return { node: process.version, major: Number(process.versions.node.split('.')[0]), v8: process.versions.v8 };
}

/**
 * Reads `results/<suite>.json` (or any results file) as `{ suite, runs }`, one run per Node
 * major, oldest major first. Files written before runs were kept per runtime hold a single
 * record; they read as one run on the Node version their machine line names.
 */
export function readResultsFile(file) {
  const record = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = Array.isArray(record.runs) ? record.runs : Array.isArray(record.scenarios) ? [record] : null;
  if (runs === null) throw new Error(`${path.basename(file)} has neither runs nor scenarios`);
  for (const run of runs) run.runtime ??= runtimeOf(run);
  runs.sort((a, b) => a.runtime.major - b.runtime.major);
  return { suite: record.suite ?? runs[0]?.suite, runs };
}

function runtimeOf(record) {
  const node = record.machine?.node ?? 'v0.0.0';
  return { node, major: Number(/^v?(\d+)/.exec(node)?.[1] ?? 0), v8: record.machine?.v8 ?? null };
}

/**
 * Writes this runtime's run into `results/<suite>.json`: the run replaces the one from the same
 * Node major and the runs from other majors are kept, so running a suite under each runtime in
 * turn (run-all.mjs --node 20,22,24,26) builds up one file with every runtime side by side.
 */
export function writeResults(suite, { scenarios, command, repeats, extra }) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${suite}.json`);
  const run = {
    suite,
    runtime: runtimeInfo(),
    date: new Date().toISOString(),
    command,
    repeats,
    machine: machineInfo(),
    scenarios,
    ...(extra ? { extra } : {}),
  };
  let runs = [];
  if (fs.existsSync(file)) {
    try {
      runs = readResultsFile(file).runs.filter((r) => r.runtime.major !== run.runtime.major);
    } catch (error) {
      console.warn(`writeResults: ${file} is unreadable (${error.message}); starting it afresh`);
    }
  }
  runs.push(run);
  runs.sort((a, b) => a.runtime.major - b.runtime.major);
  fs.writeFileSync(file, JSON.stringify({ suite, runs }, null, 2) + '\n');
  return file;
}

/** Formats a number for console output. */
export function fmt(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return Number(value.toPrecision(digits)).toString();
}

/** Prints a scenario as one console line. */
export function printScenario(sc) {
  const parts = Object.entries(sc.results).map(([name, r]) => `${name}=${fmt(r.median)}`);
  const ratio = sc.ratio === null ? '' : ` ratio=${fmt(sc.ratio)}x`;
  const met = sc.met === null ? '' : sc.met ? ' [target met]' : ' [target MISSED]';
  console.log(`  ${sc.id} (${sc.unit}): ${parts.join(' ')}${ratio}${met}`);
}

/**
 * A suite's entry when it is run as a script: refuses to run without `--expose-gc` where it
 * measures memory (`needsGc`: figures would be inexact), runs `run()`, prints its scenarios when `print` is set, and writes
 * `results/<suite>.json` with `extra(result)` (what `run` returned) as the run's extra record.
 */
export async function runSuite(
  suite,
  run,
  { repeats, print = false, needsGc = true, extra = (result) => result.extra } = {},
) {
  if (needsGc && typeof globalThis.gc !== 'function') {
    console.error(`run with --expose-gc (node --expose-gc suites/${suite}.mjs) so memory figures are exact`);
    process.exit(1);
  }
  const result = await run();
  if (print) for (const sc of result.scenarios) printScenario(sc);
  const file = writeResults(suite, {
    scenarios: result.scenarios,
    command: `npm run bench -- ${suite}`,
    repeats,
    extra: extra(result),
  });
  console.log(`  wrote ${file}`);
}
