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
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const KERNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), 'instruction-kernel.mjs');

/** True when `valgrind` is on the PATH (Debian: `apt-get install valgrind`). */
export function valgrindAvailable() {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Total instructions (cachegrind's "I refs") of one kernel run under `node`; `kernel` and `env`
 * name another kernel script taking the same arguments (channel-kernels.mjs) and its environment,
 * `nodeFlags` more flags for node (fetch-instructions.mjs sizes the old generation with them).
 */
export function countInstructions(
  node,
  scenario,
  candidate,
  ops,
  { kernel = KERNEL, env = process.env, nodeFlags = [] } = {},
) {
  const res = spawnSync(
    'valgrind',
    [
      '--tool=cachegrind',
      '--cache-sim=no',
      '--cachegrind-out-file=/dev/null',
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
    { encoding: 'utf8', maxBuffer: 16 * 2 ** 20, timeout: 15 * 60_000, env },
  );
  const match = /I\s+refs:\s+([\d,]+)/.exec(res.stderr ?? '');
  if (res.status !== 0 || match === null) {
    throw new Error(
      `cachegrind: ${scenario}/${candidate} with ${ops} ops failed (status ${res.status}): ${(res.stderr ?? '').split('\n').slice(-5).join(' | ')}`,
    );
  }
  return Number(match[1].replaceAll(',', ''));
}

/** Instructions per operation: the long-run minus short-run difference, divided by the ops between. */
export function instructionsPerOp(node, scenario, candidate, { shortOps, longOps }, kernelOptions) {
  const short = countInstructions(node, scenario, candidate, shortOps, kernelOptions);
  const long = countInstructions(node, scenario, candidate, longOps, kernelOptions);
  return { perOp: (long - short) / (longOps - shortOps), short, long, shortOps, longOps };
}

/**
 * Runs `node <script> ...args` in a child process and resolves with the JSON it prints: how a
 * counter runs its counts (each a valgrind run) two at a time. `label` names the count in the
 * error when the child fails.
 */
export function jsonFromChild(script, args, label) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (status) =>
      status === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${label} failed (status ${status})`)),
    );
  });
}
