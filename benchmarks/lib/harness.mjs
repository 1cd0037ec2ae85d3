/**
 * Shared plumbing for every benchmark suite: machine details, medians and percentiles,
 * alternating runs of competing candidates, and the results file format.
 *
 * A suite is `suites/<name>.mjs` exporting `async function run(options)` that returns
 * `{ scenarios }` and is executed by `run-all.mjs` (or alone: `node suites/<name>.mjs`).
 * Results go to `results/<name>.json`, one run per Node major (see `writeResults`); `render.mjs`
 * turns all of them into the chart and the README tables, every runtime side by side. Figures
 * are never typed by hand anywhere: they all come from these files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { median: median(s), samples: s }]));
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
