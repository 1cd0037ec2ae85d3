/** Worker processes (test/integration/fixtures/worker.cjs) forked and tracked for cleanup. */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, '../integration/fixtures/worker.cjs');
const DIST = path.join(HERE, '../../dist/index.js');

export interface WorkerConfig {
  url?: string;
  clusterPorts?: number[];
  namespace: string;
  leaseMs: number;
  shards?: number;
  pollIntervalMs?: number;
  concurrency?: number;
  mode?: 'ack' | 'hang';
}

export interface WorkerProcess {
  child: ChildProcess;
  /** [id, attempts, latenessMs] per fired timer, in order. */
  fired: [string, number, number][];
  ready: Promise<void>;
  /** Stops it gracefully (RedisTimers.stop); resolves with its count of background errors. */
  stop(): Promise<number>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

const alive = new Set<ChildProcess>();

export function forkWorker(config: WorkerConfig): WorkerProcess {
  if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: build first (npx tsc --build)`);
  const child = fork(SCRIPT, [], { env: { ...process.env, TICKWHEEL_WORKER: JSON.stringify(config) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  alive.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => alive.delete(child));
  const fired: [string, number, number][] = [];
  let stopped: ((errors: number) => void) | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: { type: string; fired?: [string, number, number][]; errors?: number }) => {
      if (message.type === 'ready') resolve();
      else if (message.type === 'fired') fired.push(...message.fired!);
      else if (message.type === 'stopped') stopped?.(message.errors ?? 0);
    });
    child.once('exit', (code, signal) => reject(new Error(`worker exited before it was ready (${code ?? signal})`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    fired,
    ready,
    stop: () =>
      new Promise<number>((resolve) => {
        stopped = resolve;
        child.send('stop');
      }),
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** SIGKILLs every worker still running (for afterEach). */
export async function killAllWorkers(): Promise<void> {
  await Promise.all(
    [...alive].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
