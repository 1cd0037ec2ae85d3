/**
 * The Node.js runtimes the benchmarks run under: the ones users run and CI tests (22, 24, 26)
 * plus this machine's own (20). A runtime other than the one running this script comes from
 * `scripts/node-runtime.sh <major>`, which fetches the same registry binaries CI uses once and
 * caches them, so a suite measured "under Node 24" ran on the binary the tests ran on.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { BENCH_DIR } from './harness.mjs';

/** Every runtime a full benchmark run covers, oldest first. */
export const TESTED_MAJORS = [20, 22, 24, 26];

const CURRENT_MAJOR = Number(process.versions.node.split('.')[0]);
const RUNTIME_SCRIPT = path.join(path.dirname(BENCH_DIR), 'scripts', 'node-runtime.sh');

/**
 * Parses a `--node` list: comma-separated majors, `all` (every tested runtime) or `current`
 * (only the runtime running this script).
 *
 * @throws RangeError naming the bad entry
 */
export function parseMajors(list) {
  const out = [];
  for (const item of String(list)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (item === 'all') out.push(...TESTED_MAJORS);
    else if (item === 'current') out.push(CURRENT_MAJOR);
    else if (/^\d+$/.test(item)) out.push(Number(item));
    else
      throw new RangeError(
        `--node must list Node majors (e.g. 20,22,24,26), 'all' or 'current', got ${JSON.stringify(item)}`,
      );
  }
  if (out.length === 0)
    throw new RangeError(`--node must name at least one runtime, got ${JSON.stringify(String(list))}`);
  return [...new Set(out)].sort((a, b) => a - b);
}

/** The `node` binary of a Node major: this process's own when it is that major, else the cached one. */
export function nodeBinary(major) {
  if (major === CURRENT_MAJOR) return process.execPath;
  const bin = execFileSync(RUNTIME_SCRIPT, [String(major)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return path.join(bin, 'node');
}

/**
 * Runs `node script ...args` to its end under the runtime `node` (a binary path), with this
 * process's stdio and `PATH` starting at that runtime's folder, so anything the script starts by
 * name (`node`, `npx`) is the same runtime. Returns the exit status.
 */
export function runUnder(node, script, args = [], { execArgv = [] } = {}) {
  const res = spawnSync(node, [...execArgv, script, ...args], {
    stdio: 'inherit',
    cwd: BENCH_DIR,
    env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  return res.status;
}
