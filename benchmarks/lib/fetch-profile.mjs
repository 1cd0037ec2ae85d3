/**
 * Where the wrapper's CPU goes against a real server: a CPU profile of the fetch suite's
 * throughput loop, and the share of the client's busy time spent in the wrapper's own functions.
 *
 * A sample counts for the wrapper when, walking from the sampled function towards the root, a
 * function of packages/fetch or packages/core comes before any function of undici or of this
 * script: Node internals it calls (AbortController, queueMicrotask, setTimeout) count for it,
 * undici code it forwards to (fetch's own handler behind the transport tap) does not, nor does
 * loading the modules (once per process). A share of
 * samples moves much less with the load of a shared machine than CPU time does, and it names the
 * functions, which the throughput scenario cannot.
 *
 *   node --expose-gc suites/fetch.mjs --profile [--node 22] [requests]   # against the suite's local server
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMain } from './harness.mjs';
import { runUnder } from './runtimes.mjs';

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.join(path.dirname(SELF), '..', '..');
const CONCURRENCY = 8;
const WARMUP = 1_500;
const TIMEOUT_MS = 60_000;

/** In the profiled child: the fetch suite's throughput loop, withTimeouts with all three limits. */
async function clientMain(url, count) {
  const { withTimeouts } = await import(pathToFileURL(path.join(ROOT, 'packages', 'fetch', 'dist', 'index.js')).href);
  const timed = withTimeouts(fetch, { headersMs: TIMEOUT_MS, bodyIdleMs: TIMEOUT_MS, totalMs: TIMEOUT_MS });
  const load = async (n) => {
    let next = 0;
    const worker = async () => {
      while (next++ < n) await (await timed(url)).text();
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  await load(WARMUP);
  await load(count);
}

/** Self time by wrapper function (see the header), and the busy total, in µs. */
function wrapperShare(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const time = new Map();
  profile.samples.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let busy = 0;
  const ours = new Map();
  for (const [id, us] of time) {
    if (byId.get(id).callFrame.functionName === '(idle)') continue;
    busy += us;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const { url, functionName, lineNumber } = byId.get(at).callFrame;
      if (/packages\/(fetch|core)\//.test(url)) {
        if (functionName === '' && lineNumber === 0) break; // loading a module, once per process
        const key = `${functionName || '(top level)'} ${url.split('/').slice(-3).join('/')}:${lineNumber + 1}`;
        ours.set(key, (ours.get(key) ?? 0) + us);
        break;
      }
      if (/undici|fetch-profile/.test(url)) break;
    }
  }
  return { busy, ours };
}

/**
 * Profiles `count` (+ WARMUP) requests of withTimeouts(fetch) against `url` in a child under
 * `node`, and prints the wrapper's share of the client's busy time, by function.
 */
export async function profileWrapper(url, { node = process.execPath, count = 8_000 } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fetch-profile-'));
  try {
    const status = runUnder(node, SELF, ['--client', url, String(count)], {
      execArgv: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200'],
    });
    if (status !== 0) throw new Error(`profiled client exited with ${status}`);
    const [file] = fs.readdirSync(dir);
    const { busy, ours } = wrapperShare(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
    const total = [...ours.values()].reduce((a, b) => a + b, 0);
    const requests = count + WARMUP;
    const version = spawnSync(node, ['-p', 'process.version + " undici " + process.versions.undici'], {
      encoding: 'utf8',
    }).stdout.trim();
    console.log(
      `${version}, load ${os.loadavg()[0].toFixed(1)}: ${requests} requests, ${(busy / requests).toFixed(1)} µs busy each (under the profiler)`,
    );
    console.log(
      `wrapper's own functions: ${((100 * total) / busy).toFixed(2)}% = ${(total / requests).toFixed(2)} µs per request`,
    );
    for (const [key, us] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
      console.log(`  ${(us / requests).toFixed(3).padStart(7)} µs  ${key}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url) && process.argv[2] === '--client')
  await clientMain(process.argv[3], Number(process.argv[4]));
