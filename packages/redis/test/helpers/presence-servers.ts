/** Presence server processes (test/integration/fixtures/presence-server.mjs) forked and tracked for cleanup by pid. */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCRIPT = path.join(HERE, '../integration/fixtures/presence-server.mjs');
const DIST = path.join(HERE, '../../dist/index.js');

export interface PresenceServerConfig {
  url?: string;
  clusterPorts?: number[];
  namespace: string;
  graceMs: number;
  nodeTtlMs: number;
  shards?: number;
}

/** One 'join' or 'leave' event: [event, member, epoch ms]. */
export type PresenceEventRecord = ['join' | 'leave', string, number];

export interface PresenceServer {
  child: ChildProcess;
  events: PresenceEventRecord[];
  ready: Promise<void>;
  /** The server's registration, as of its last answer. */
  nodeId(): string | undefined;
  /** Joins (or leaves) the pairs; resolves with each call's result (or `error: ...`). */
  join(pairs: [string, string][]): Promise<(boolean | string)[]>;
  leave(pairs: [string, string][]): Promise<(boolean | string)[]>;
  /** Stops it gracefully (RedisPresence.stop); resolves with its count of background errors. */
  stop(): Promise<number>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
}

const alive = new Set<ChildProcess>();

export function forkPresenceServer(config: PresenceServerConfig): PresenceServer {
  if (!fs.existsSync(DIST)) throw new Error(`${DIST} is missing: build first (npx tsc --build)`);
  const child = fork(SCRIPT, [], {
    env: { ...process.env, TICKWHEEL_PRESENCE: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  alive.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => alive.delete(child));
  const events: PresenceEventRecord[] = [];
  let node: string | undefined;
  let stopped: ((errors: number) => void) | undefined;
  let calls = 0;
  const pending = new Map<number, (results: (boolean | string)[]) => void>();
  interface Message {
    type: string;
    events?: PresenceEventRecord[];
    id?: number;
    results?: (boolean | string)[];
    nodeId?: string;
    errors?: number;
  }
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (message: Message) => {
      if (message.nodeId !== undefined) node = message.nodeId;
      if (message.events !== undefined) events.push(...message.events);
      if (message.type === 'ready') resolve();
      else if (message.type === 'done') pending.get(message.id!)?.(message.results!);
      else if (message.type === 'stopped') stopped?.(message.errors ?? 0);
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`presence server exited before it was ready (${code ?? signal})`)),
    );
  });
  ready.catch(() => undefined);
  const call = (op: 'join' | 'leave', pairs: [string, string][]) =>
    new Promise<(boolean | string)[]>((resolve) => {
      const id = calls++;
      pending.set(id, resolve);
      child.send({ id, [op]: pairs });
    });
  return {
    child,
    events,
    ready,
    nodeId: () => node,
    join: (pairs) => call('join', pairs),
    leave: (pairs) => call('leave', pairs),
    stop: () =>
      new Promise<number>((resolve) => {
        stopped = resolve;
        child.send('stop');
      }),
    async kill() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        process.kill(child.pid, 'SIGKILL');
      await exited;
    },
    signal(signal) {
      if (child.pid !== undefined) process.kill(child.pid, signal);
    },
  };
}

/** SIGKILLs (by pid) every presence server still running, stopped ones included (for afterEach). */
export async function killAllPresenceServers(): Promise<void> {
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
