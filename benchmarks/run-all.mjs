/**
 * Runs every suite in its own child process (with --expose-gc), one after another so suites
 * do not disturb each other, then renders the chart and the README table from the results.
 *
 *   npm run bench                 # all suites
 *   npm run bench -- core fetch   # only the named suites
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR } from './lib/harness.mjs';

const only = process.argv.slice(2);
const suites = fs
  .readdirSync(path.join(BENCH_DIR, 'suites'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.replace(/\.mjs$/, ''))
  .filter((name) => only.length === 0 || only.includes(name))
  .sort();

let failed = 0;
for (const suite of suites) {
  console.log(`\n== ${suite}`);
  const res = spawnSync(process.execPath, ['--expose-gc', path.join(BENCH_DIR, 'suites', `${suite}.mjs`)], {
    stdio: 'inherit',
    cwd: BENCH_DIR,
  });
  if (res.status !== 0) {
    failed++;
    console.error(`suite ${suite} failed with status ${res.status}`);
  }
}
const render = path.join(BENCH_DIR, 'render.mjs');
if (fs.existsSync(render)) spawnSync(process.execPath, [render], { stdio: 'inherit', cwd: BENCH_DIR });
process.exit(failed ? 1 : 0);
