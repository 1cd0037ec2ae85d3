/** Presence server processes (test/integration/fixtures/presence-server.mjs), forked through workers.ts's forkTracked. */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forkTracked } from './workers.js';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../integration/fixtures/presence-server.mjs');

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

export function forkPresenceServer(config: PresenceServerConfig): PresenceServer {
  const { child, kill, signal } = forkTracked(SCRIPT, 'TICKWHEEL_PRESENCE', config);
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
    kill,
    signal,
  };
}
