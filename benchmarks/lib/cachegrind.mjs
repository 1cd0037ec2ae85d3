/**
 * Instructions per operation, counted by valgrind's cachegrind: a figure that does not move
 * with the load of a shared machine, so a change to the hot path can be judged on it even when
 * wall-clock ratios swing between runs.
 *
 * A kernel (instruction-kernel.mjs) runs one candidate on one scenario for N operations. It runs
 * twice under `valgrind --tool=cachegrind`, for a long and a short N, and the figure is
 *
 *     (instructions of the long run - instructions of the short run) / (long N - short N)
 *
 * so start-up, module loading, set-up of the timers in flight and most of the JIT's work cancel
 * out, and what is left is the steady-state cost of one operation, garbage collection included.
 * Node runs with `--predictable --no-concurrent-recompilation`: optimizing compiles and GC work
 * happen on the main thread at the same points in every run instead of on background threads at
 * whatever moment. (Without `--predictable` two runs of the same length differed by up to 250M
 * instructions, ±125 per op at 800k ops; with it they differ by 0.01%.)
 * Counts are of every instruction the process executes (the VM, libuv and the kernel's user
 * side of system calls), exactly what the CPU would retire, not what it would cost in cycles:
 * cache misses, which dominate the 1M-timer scenarios, are not in this figure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const KERNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), 'instruction-kernel.mjs');

/**
 * V8's compilers, by symbol: TurboFan/Turboshaft, Maglev, Sparkplug. A function is compiled once,
 * but when depends on the type feedback that the run's timing gave it, so a count that must not
 * move with timing can leave their instructions out (`compilers: true`).
 */
const COMPILER_SYMBOL = /v8::internal::(compiler|maglev|baseline)::|turboshaft/;

/** True when `valgrind` is on the PATH (Debian: `apt-get install valgrind`). */
export function valgrindAvailable() {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Total instructions (cachegrind's "I refs") of one kernel run under `node`; `kernel` and `env`
 * name another kernel script taking the same arguments (channel-kernels.mjs) and its environment,
 * `nodeFlags` more flags for node (fetch-instructions.mjs sizes the old generation with them).
 * With `compilers: true` it returns `{ total, compiler }`: every instruction, and those of them
 * in V8's compilers (COMPILER_SYMBOL, by function through cg_annotate).
 */
export function countInstructions(
  node,
  scenario,
  candidate,
  ops,
  { kernel = KERNEL, env = process.env, nodeFlags = [], compilers = false } = {},
) {
  const out = compilers
    ? path.join(os.tmpdir(), `cachegrind-${process.pid}-${scenario}-${candidate}-${ops}.cg`)
    : '/dev/null';
  try {
    const res = spawnSync(
      'valgrind',
      [
        '--tool=cachegrind',
        '--cache-sim=no',
        `--cachegrind-out-file=${out}`,
        node,
        '--predictable',
        '--no-concurrent-recompilation',
        '--expose-gc',
        ...nodeFlags,
        kernel,
        scenario,
        candidate,
        String(ops),
      ],
      { encoding: 'utf8', maxBuffer: 16 * 2 ** 20, timeout: 20 * 60_000, env },
    );
    const match = /I\s+refs:\s+([\d,]+)/.exec(res.stderr ?? '');
    if (res.status !== 0 || match === null) {
      throw new Error(
        `cachegrind: ${scenario}/${candidate} with ${ops} ops failed (status ${res.status}): ${(res.stderr ?? '').split('\n').slice(-5).join(' | ')}`,
      );
    }
    const total = Number(match[1].replaceAll(',', ''));
    return compilers ? { total, compiler: compilerInstructions(out) } : total;
  } finally {
    if (compilers) fs.rmSync(out, { force: true });
  }
}

/** The instructions of V8's compilers in a cachegrind output file, by function. */
function compilerInstructions(file) {
  const annotated = spawnSync('cg_annotate', ['--auto=no', '--threshold=0', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 2 ** 20,
  });
  if (annotated.status !== 0) throw new Error(`cg_annotate failed: ${annotated.stderr}`);
  let compiler = 0;
  for (const line of annotated.stdout.split('\n')) {
    const fn = /^\s*([\d,]+)\s+\([^)]*\)\s+(.*)$/.exec(line);
    if (fn !== null && COMPILER_SYMBOL.test(fn[2])) compiler += Number(fn[1].replaceAll(',', ''));
  }
  return compiler;
}

/**
 * Instructions per operation: the long-run minus short-run difference, divided by the ops
 * between. With `compilers: true` in `kernelOptions`, `perOp` leaves V8's compilers out and
 * `perOpAll` keeps them, and `short` and `long` are `{ total, compiler }`.
 */
export function instructionsPerOp(node, scenario, candidate, { shortOps, longOps }, kernelOptions = {}) {
  const short = countInstructions(node, scenario, candidate, shortOps, kernelOptions);
  const long = countInstructions(node, scenario, candidate, longOps, kernelOptions);
  const ops = longOps - shortOps;
  if (!kernelOptions.compilers) return { perOp: (long - short) / ops, short, long, shortOps, longOps };
  return {
    perOp: (long.total - long.compiler - (short.total - short.compiler)) / ops,
    perOpAll: (long.total - short.total) / ops,
    short,
    long,
    shortOps,
    longOps,
  };
}
