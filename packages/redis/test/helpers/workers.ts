/** Worker processes (test/integration/fixtures/worker.mjs, and any fixture through forkTracked) forked and tracked for cleanup by pid. */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, '../integration/fixtures/worker.mjs');
const DIST = path.join(HERE, '../../dist/index.js');

export interface WorkerConfig {
  url?: string;
  clusterPorts?: number[];
  namespace: string;
  leaseMs: number;
  shards?: number;
  pollIntervalMs?: number;
  concurrency?: number;
  mode?: 'ack' | 'hang' | 'fail' | 'slow';
  handlerMs?: number;
}

/** One handler start: [id, attempts, latenessMs, token, leaseExpiresAt, startedAt]. */
export type Start = [string, number, number, string, number, number];

export interface WorkerProcess {
  child: ChildProcess;
  fired: Start[];
  /** Handlers that resolved: [id, token]. */
  done: [string, string][];
  /** 'stale' events: [id, stage]. */
  stale: [string, string][];
  /** 'failed' events: [id, attempts]. */
  failed: [string, number][];
  ready: Promise<void>;
  /** Stops it gracefully (RedisTimers.stop); resolves with its count of background errors. */
  stop(): Promise<number>;
  /** SIGKILL. */
  kill(): Promise<void>;
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

const alive = new Set<ChildProcess>();

/**
 * Forks `script` (a fixture running the BUILT package) with `config` as JSON in env `envName`,
 * tracked for {@link killAllWorkers}; `kill()` resolves once it is gone.
 */
export function forkTracked(
  script: string,
  envName: string,
  config: object,
): { child: ChildProcess; kill: () => Promise<void>; signal: (signal: NodeJS.Signals) => void } {
  if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: build first (npx tsc --build)`);
  const child = fork(script, [], {
    env: { ...process.env, [envName]: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  alive.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => alive.delete(child));
  return {
    child,
    kill: async () => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        process.kill(child.pid, 'SIGKILL');
      await exited;
    },
    signal: (signal) => {
      if (child.pid !== undefined) process.kill(child.pid, signal);
    },
  };
}

export function forkWorker(config: WorkerConfig): WorkerProcess {
  const { child, kill, signal } = forkTracked(SCRIPT, 'TICKWHEEL_WORKER', config);
  const worker = {
    fired: [] as Start[],
    done: [] as [string, string][],
    stale: [] as [string, string][],
    failed: [] as [string, number][],
  };
  let stopped: ((errors: number) => void) | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    child.on(
      'message',
      (message: {
        type: string;
        fired?: Start[];
        done?: [string, string][];
        stale?: [string, string][];
        failed?: [string, number][];
        errors?: number;
      }) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'report') {
          worker.fired.push(...message.fired!);
          worker.done.push(...message.done!);
          worker.stale.push(...message.stale!);
          worker.failed.push(...message.failed!);
        } else if (message.type === 'stopped') stopped?.(message.errors ?? 0);
      },
    );
    child.once('exit', (code, signal) => reject(new Error(`worker exited before it was ready (${code ?? signal})`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ...worker,
    ready,
    stop: () =>
      new Promise<number>((resolve) => {
        stopped = resolve;
        child.send('stop');
      }),
    kill,
    signal,
  };
}

/** SIGKILLs (by pid) every forked process still running, stopped ones included (for afterEach). */
export async function killAllWorkers(): Promise<void> {
  await Promise.all(
    [...alive].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          process.kill(child.pid!, 'SIGKILL');
        }),
    ),
  );
}
