/**
 * Real redis-server processes for the tests: installed from Debian's package when missing, each
 * on a free loopback port with its own temporary directory, always stopped by the caller.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { ensureDebianPackages, onPath } from '../../../../scripts/ensure-debian-packages.mjs';

/** Installs Debian's redis-server (which brings redis-cli) unless it is already there. */
export function ensureRedisInstalled(): void {
  ensureDebianPackages(['redis-server'], () => onPath('redis-server') && onPath('redis-cli'), 'the redis tests');
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free loopback port whose +10000 (the cluster bus port) is free too. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await portFree(port)) && (await portFree(port + 10_000))) return port;
  }
  throw new Error('no free loopback port found');
}

export interface RedisServerOptions {
  /** AOF with fsync on every write (`'always'`, or `true`) or once a second (`'everysec'`). */
  appendOnly?: boolean | 'always' | 'everysec';
  /** Start in cluster mode. */
  cluster?: boolean;
  /** `cluster-node-timeout` in ms (cluster mode), default 2 000. */
  nodeTimeoutMs?: number;
}

export interface RedisServer {
  port: number;
  /** The process id while it runs. */
  readonly pid: number | undefined;
  url: string;
  dir: string;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill). */
  restart(): Promise<void>;
  /** Stops it and deletes its directory. */
  stop(): Promise<void>;
}

async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const info = await client.info('persistence');
      if (!/loading:1/.test(info)) return;
    } catch {
      // not up yet
    } finally {
      client.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a redis-server bound to 127.0.0.1 on a free port, in a fresh temporary directory. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--logfile',
    path.join(dir, 'redis.log'),
  ];
  if (options.appendOnly)
    args.push('--appendonly', 'yes', '--appendfsync', options.appendOnly === 'everysec' ? 'everysec' : 'always');
  else args.push('--appendonly', 'no');
  if (options.cluster)
    args.push(
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      path.join(dir, 'nodes.conf'),
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 2_000),
    );
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    child.on('error', () => undefined);
    await waitForPing(port, 10_000);
  };
  await launch();
  return {
    port,
    get pid() {
      return child?.pid;
    },
    url: `redis://127.0.0.1:${port}`,
    dir,
    async kill() {
      if (child === undefined) return;
      child.kill('SIGKILL');
      await exited(child);
    },
    restart: launch,
    async stop() {
      if (child !== undefined) {
        child.kill('SIGKILL');
        await exited(child);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisCluster {
  nodes: RedisServer[];
  /** The nodes that are masters right after creation, each with its replica (if any). */
  shards: { master: RedisServer; replica: RedisServer | undefined; firstSlot: number }[];
  stop(): Promise<void>;
}

function clusterCli(port: number, ...args: string[]): string {
  return spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '';
}

/**
 * A Redis Cluster on loopback made with `redis-cli --cluster create`: `masters` masters with
 * `replicas` replicas each, AOF (fsync every second) and a short `cluster-node-timeout`, so a
 * killed master is failed over in a couple of seconds.
 */
export async function startRedisCluster(masters = 3, replicas = 0, nodeTimeoutMs = 2_000): Promise<RedisCluster> {
  const nodes: RedisServer[] = [];
  try {
    const count = masters * (1 + replicas);
    const started = await Promise.all(
      Array.from({ length: count }, () => startRedisServer({ cluster: true, appendOnly: 'everysec', nodeTimeoutMs })),
    );
    nodes.push(...started);
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = nodes.map((n) => clusterCli(n.port, 'cluster', 'info'));
      const replicasUp = nodes
        .map((n) => clusterCli(n.port, 'role'))
        .filter((r) => /^slave/.test(r) && /connected/.test(r)).length;
      if (states.every((s) => /cluster_state:ok/.test(s)) && replicasUp === masters * replicas) break;
      if (Date.now() > deadline)
        throw new Error(`cluster did not reach cluster_state:ok with its replicas in sync: ${states.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
  // `cluster nodes`: <id> <ip:port@bus> <flags> <master id or -> ... <slot ranges>
  const lines = clusterCli(nodes[0].port, 'cluster', 'nodes')
    .trim()
    .split('\n')
    .map((l) => l.split(' '));
  const byId = new Map(lines.map((f) => [f[0], nodes.find((n) => f[1].startsWith(`127.0.0.1:${n.port}@`))!]));
  const shards = lines
    .filter((f) => f[2].includes('master'))
    .map((f) => ({
      master: byId.get(f[0])!,
      replica: [...byId.entries()].find(([id]) => lines.find((g) => g[0] === id)![3] === f[0])?.[1],
      firstSlot: Number(f[8].split('-')[0]),
    }));
  return { nodes, shards, stop: () => Promise.all(nodes.map((n) => n.stop())).then(() => undefined) };
}

/**
 * Waits until `firstSlot` is served by a live master and every live node says cluster_state:ok
 * (the failover of a killed master is over); returns when that was seen.
 */
export async function waitForFailover(
  cluster: RedisCluster,
  dead: RedisServer,
  firstSlot: number,
  timeoutMs: number,
): Promise<number> {
  const alive = cluster.nodes.filter((n) => n !== dead);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis({
      port: alive[0].port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      const nodesText = String(await probe.call('cluster', 'nodes'));
      const owner = nodesText
        .split('\n')
        .map((l) => l.split(' '))
        .find(
          (f) =>
            f[2]?.includes('master') &&
            !f[2].includes('fail') &&
            f.slice(8).some((r) => {
              const [a, b] = r.split('-').map(Number);
              return a <= firstSlot && firstSlot <= (b ?? a);
            }),
        );
      const states = await Promise.all(
        alive.map(async (n) => {
          const c = new Redis({
            port: n.port,
            host: '127.0.0.1',
            lazyConnect: true,
            maxRetriesPerRequest: 0,
            retryStrategy: () => null,
          });
          c.on('error', () => undefined);
          try {
            await c.connect();
            return String(await c.call('cluster', 'info'));
          } finally {
            c.disconnect();
          }
        }),
      );
      if (
        owner !== undefined &&
        !owner[1].startsWith(`127.0.0.1:${dead.port}@`) &&
        states.every((s) => /cluster_state:ok/.test(s))
      )
        return Date.now();
    } catch {
      // a node is busy electing: ask again
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`slot ${firstSlot} was not failed over within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
