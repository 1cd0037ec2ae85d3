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
  /** AOF with fsync on every write. */
  appendOnly?: boolean;
  /** Start in cluster mode. */
  cluster?: boolean;
}

export interface RedisServer {
  port: number;
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
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
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
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', '--protected-mode', 'yes', '--logfile', path.join(dir, 'redis.log')];
  if (options.appendOnly) args.push('--appendonly', 'yes', '--appendfsync', 'always');
  else args.push('--appendonly', 'no');
  if (options.cluster) args.push('--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, 'nodes.conf'), '--cluster-node-timeout', '2000');
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    child.on('error', () => undefined);
    await waitForPing(port, 10_000);
  };
  await launch();
  return {
    port,
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

/** A 3-master Redis Cluster on loopback, made with `redis-cli --cluster create`. */
export async function startRedisCluster(masters = 3): Promise<{ nodes: RedisServer[]; stop(): Promise<void> }> {
  const nodes: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startRedisServer({ cluster: true }));
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = nodes.map((n) => spawnSync('redis-cli', ['-p', String(n.port), 'cluster', 'info'], { encoding: 'utf8' }).stdout);
      if (states.every((s) => /cluster_state:ok/.test(s))) break;
      if (Date.now() > deadline) throw new Error(`cluster did not reach cluster_state:ok: ${states.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
  return { nodes, stop: () => Promise.all(nodes.map((n) => n.stop())).then(() => undefined) };
}
