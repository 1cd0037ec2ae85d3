/**
 * Runs the whole vitest suite under load: two CPU-bound processes spin beside it, started before
 * and killed after each run, so that a test that only passes on an idle machine fails here.
 *
 *   node scripts/loaded-run.mjs                   one run of `vitest run`, two spinners
 *   node scripts/loaded-run.mjs --runs 3          three runs back to back, each with fresh spinners
 *   node scripts/loaded-run.mjs --spinners 4 -- --project fetch    arguments after `--` go to vitest
 *
 * Prints each run's summary line (`tests: N passed, N failed, N skipped`), wall time and exit
 * code, then one line for all runs; exits 1 when any run failed. Expects a built workspace
 * (`npm run build`), as `vitest run` does.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const { values, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '1' }, spinners: { type: 'string', default: '2' } },
  allowPositionals: true,
});
const runs = Number(values.runs);
const spinnerCount = Number(values.spinners);
if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`--runs must be an integer >= 1, got ${values.runs}`);
if (!Number.isInteger(spinnerCount) || spinnerCount < 0)
  throw new RangeError(`--spinners must be an integer >= 0, got ${values.spinners}`);

/** Spinners alive now, killed on every way out. */
const spinners = new Set();
function stopSpinners() {
  for (const child of spinners) child.kill('SIGKILL');
  spinners.clear();
}
process.on('exit', stopSpinners);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopSpinners();
    process.exit(130);
  });
}

/** One CPU-bound process: a busy loop, at normal priority, as another job on the machine would be. */
function startSpinner() {
  const child = spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' });
  spinners.add(child);
  child.on('exit', () => spinners.delete(child));
}

/** Runs vitest once with output passed through; resolves with its exit code and summary line. */
function runSuite() {
  return new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', ...positionals], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString()).slice(-4_000);
    });
    child.on('close', (code, signal) => {
      const summary = tail.match(/^tests: \d+ passed, \d+ failed, \d+ skipped$/m)?.[0] ?? 'no summary line';
      resolve({ code: code ?? signal, summary });
    });
  });
}

const results = [];
for (let run = 1; run <= runs; run++) {
  for (let i = 0; i < spinnerCount; i++) startSpinner();
  const started = Date.now();
  const { code, summary } = await runSuite();
  stopSpinners();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const load = os.loadavg()[0].toFixed(1);
  results.push({ run, code, summary, seconds, load });
  console.log(
    `\nloaded run ${run}/${runs} (${spinnerCount} spinners): ${summary}, ${seconds} s, exit ${code}, load ${load}`,
  );
}

console.log('\n== loaded runs');
for (const r of results)
  console.log(`run ${r.run}: ${r.summary}, ${r.seconds} s, exit ${r.code}, 1-min load ${r.load}`);
const failed = results.filter((r) => r.code !== 0).length;
console.log(`${runs - failed} of ${runs} runs passed`);
process.exitCode = failed === 0 ? 0 : 1;
