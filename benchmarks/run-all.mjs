/**
 * Runs every suite in its own child process (with --expose-gc), one after another so suites
 * do not disturb each other, under each Node runtime asked for, then renders the chart and the
 * README tables from the results.
 *
 *   npm run bench                              # every suite under Node 20, 22, 24 and 26
 *   npm run bench -- core fetch                # only the named suites
 *   npm run bench -- core --node 24            # only under Node 24 (or: 22,26 / current / all)
 *   npm run bench -- redis-million --node current   # the ~40-minute million-timer run, only when named
 *
 * A suite run under one runtime replaces that runtime's run in `results/<suite>.json` and keeps
 * the others (see `writeResults` in lib/harness.mjs). `BENCH_NODE=current` is the same as
 * `--node current`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR } from './lib/harness.mjs';
import { nodeBinary, parseMajors, runUnder } from './lib/runtimes.mjs';

const args = process.argv.slice(2);
let nodeList = process.env.BENCH_NODE ?? 'all';
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--node') nodeList = args[++i];
  else if (args[i].startsWith('--node=')) nodeList = args[i].slice('--node='.length);
  else only.push(args[i]);
}
const majors = parseMajors(nodeList);

const available = fs
  .readdirSync(path.join(BENCH_DIR, 'suites'))
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.replace(/\.mjs$/, ''))
  .sort();
const unknown = only.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(', ')}; the suites are ${available.join(', ')}`);
  process.exit(2);
}
/**
 * Suites that run only when named: redis-million takes about 40 minutes (a million timers fired
 * over 10 minutes, once per system), so `npm run bench` with no names leaves it out.
 */
const NAMED_ONLY = ['redis-million'];
const suites = available.filter((name) => (only.length === 0 ? !NAMED_ONLY.includes(name) : only.includes(name)));
if (only.length === 0)
  console.log(`(not run unless named: ${NAMED_ONLY.join(', ')}; e.g. npm run bench -- redis-million --node current)`);

const binaries = new Map(majors.map((major) => [major, nodeBinary(major)]));
let failed = 0;
for (const suite of suites) {
  for (const [major, node] of binaries) {
    console.log(`\n== ${suite} (Node ${major}: ${node})`);
    const status = runUnder(node, path.join(BENCH_DIR, 'suites', `${suite}.mjs`), [], { execArgv: ['--expose-gc'] });
    if (status !== 0) {
      failed++;
      console.error(`suite ${suite} failed under Node ${major} with status ${status}`);
    }
  }
}
const render = path.join(BENCH_DIR, 'render.mjs');
if (fs.existsSync(render)) runUnder(process.execPath, render);
process.exit(failed ? 1 : 0);
