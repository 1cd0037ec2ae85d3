/**
 * Real redis-server processes and Redis Clusters on loopback, for the redis benchmarks and the
 * @tickwheel/redis tests alike (packages/redis/test/helpers/redis-server.ts imports this module):
 * each server on a free port with its own temporary directory, each stopped by its caller.
 * Plain JavaScript with JSDoc types, so that both a benchmark suite and a TypeScript test can load it.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sleep } from './harness.mjs';

/** @param {number} port */
function listenable(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free loopback port. With `withBusPort`, port + 10 000 (a cluster node's bus port) is free too.
 * @param {{ withBusPort?: boolean }} [options]
 * @returns {Promise<number>}
 */
export async function freePort({ withBusPort = false } = {}) {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if ((await listenable(port)) && (!withBusPort || (await listenable(port + 10_000)))) return port;
  }
  throw new Error('no free loopback port found');
}

/**
 * `redis-cli -p <port> <args>`'s output ('' when it fails), bounded to 5 s.
 * @param {number} port
 * @param {...string} args
 * @returns {string}
 */
export function redisCli(port, ...args) {
  return spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 5_000 }).stdout ?? '';
}

/** @param {string} what */
function requireRedisServer(what) {
  if (spawnSync('sh', ['-c', 'command -v redis-server'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(`redis-server is not installed (apt-get install -y redis-server), needed by ${what}`);
  }
}

/**
 * A one-off client of the server on `port` that connects when told and never retries, its errors
 * swallowed (the caller sees them as rejections): for probing a server that may be down.
 * @param {number} port
 * @returns {Redis}
 */
export function probeClient(port) {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  client.on('error', () => undefined);
  return client;
}

/**
 * Resolves once the server on `port` answers and has loaded its data (AOF replay after a restart).
 * @param {number} port
 * @param {number} timeoutMs
 */
async function waitForPing(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = probeClient(port);
    try {
      await client.connect();
      if (!/loading:1/.test(await client.info('persistence'))) return;
    } catch {
      // not up yet
    } finally {
      client.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** @param {import('node:child_process').ChildProcess} child */
function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve(undefined)));
}

/**
 * @typedef {object} RedisServerOptions
 * @property {boolean | 'always' | 'everysec'} [appendOnly] AOF with fsync on every write (`'always'`, or `true`) or once a second
 * @property {boolean} [cluster] start in cluster mode
 * @property {number} [nodeTimeoutMs] `cluster-node-timeout` in ms (cluster mode), default 2 000
 */

/**
 * @typedef {object} RedisServer
 * @property {number} port
 * @property {number | undefined} pid the process id while it runs
 * @property {string} url
 * @property {string} dir
 * @property {() => Promise<void>} kill SIGKILL, as a crash
 * @property {() => Promise<void>} restart starts it again on the same port and directory (after kill)
 * @property {() => Promise<void>} stop stops it and deletes its directory
 */

/**
 * Starts a redis-server bound to 127.0.0.1 on a free port, in a fresh temporary directory.
 * @param {RedisServerOptions} [options]
 * @returns {Promise<RedisServer>}
 */
export async function startRedisServer(options = {}) {
  requireRedisServer('startRedisServer');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-redis-'));
  const port = await freePort({ withBusPort: options.cluster === true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no'];
  args.push('--protected-mode', 'yes', '--logfile', path.join(dir, 'redis.log'));
  if (options.appendOnly)
    args.push('--appendonly', 'yes', '--appendfsync', options.appendOnly === 'everysec' ? 'everysec' : 'always');
  else args.push('--appendonly', 'no');
  if (options.cluster) {
    args.push('--cluster-enabled', 'yes', '--cluster-config-file', path.join(dir, 'nodes.conf'));
    args.push('--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2_000), '--cluster-announce-ip', '127.0.0.1');
  }
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let child;
  const launch = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    child.on('error', () => undefined);
    await waitForPing(port, 10_000);
  };
  await launch();
  const kill = async () => {
    if (child === undefined) return;
    child.kill('SIGKILL');
    await exited(child);
  };
  return {
    port,
    get pid() {
      return child?.pid;
    },
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill,
    restart: launch,
    async stop() {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The master serving `slot` in a `CLUSTER NODES` reply that is alive (not flagged fail): its
 * fields (`<id> <ip:port@bus> <flags> <master> ... <slot ranges>`), or undefined.
 * @param {string} nodesText
 * @param {number} slot
 * @returns {string[] | undefined}
 */
export function slotMaster(nodesText, slot) {
  return nodesText
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .find(
      (f) =>
        f.length > 8 &&
        f[2].includes('master') &&
        !f[2].includes('fail') &&
        f.slice(8).some((range) => {
          const [a, b = a] = range.split('-').map(Number);
          return a <= slot && slot <= b;
        }),
    );
}

/**
 * @typedef {object} RedisCluster
 * @property {RedisServer[]} nodes
 * @property {{ master: RedisServer, replica: RedisServer | undefined, firstSlot: number }[]} shards the masters right after creation, each with its replica (if any)
 * @property {(slot: number, dead?: RedisServer) => RedisServer | undefined} masterOf the live master serving `slot`, asked of a node other than `dead`
 * @property {() => Promise<void>} stop
 */

/**
 * A Redis Cluster on loopback: `masters` masters with `replicas` replicas each, AOF (fsync every
 * second) and a short `cluster-node-timeout`, so a killed master is failed over in a couple of
 * seconds. `redis-cli --cluster create` wants three masters; one master is given every slot by hand.
 * Resolves once every node says cluster_state:ok and every replica is in sync.
 * @param {number} [masters]
 * @param {number} [replicas]
 * @param {number} [nodeTimeoutMs]
 * @returns {Promise<RedisCluster>}
 */
export async function startRedisCluster(masters = 3, replicas = 0, nodeTimeoutMs = 2_000) {
  /** @type {RedisServer[]} */
  const nodes = [];
  const stop = () => Promise.all(nodes.map((n) => n.stop())).then(() => undefined);
  try {
    const count = masters * (1 + replicas);
    const options = { cluster: true, appendOnly: /** @type {const} */ ('everysec'), nodeTimeoutMs };
    nodes.push(...(await Promise.all(Array.from({ length: count }, () => startRedisServer(options)))));
    if (masters === 1) {
      if (replicas !== 0) throw new Error('a 1-master cluster is made without replicas');
      redisCli(nodes[0].port, 'cluster', 'addslotsrange', '0', '16383');
    } else {
      const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
      const create = spawnSync(
        'redis-cli',
        ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'],
        { encoding: 'utf8', timeout: 30_000 },
      );
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    }
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = nodes.map((n) => redisCli(n.port, 'cluster', 'info'));
      const replicasUp = nodes
        .map((n) => redisCli(n.port, 'role'))
        .filter((role) => /^slave/.test(role) && /connected/.test(role)).length;
      if (states.every((s) => /cluster_state:ok/.test(s)) && replicasUp === masters * replicas) break;
      if (Date.now() > deadline)
        throw new Error(`cluster did not reach cluster_state:ok with its replicas in sync: ${states.join('\n')}`);
      await sleep(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const nodeAt = (/** @type {string} */ address) => nodes.find((n) => address.startsWith(`127.0.0.1:${n.port}@`));
  const lines = redisCli(nodes[0].port, 'cluster', 'nodes')
    .trim()
    .split('\n')
    .map((line) => line.split(' '));
  const shards = lines
    .filter((f) => f[2].includes('master'))
    .map((f) => ({
      master: /** @type {RedisServer} */ (nodeAt(f[1])),
      replica: nodeAt(lines.find((g) => g[3] === f[0])?.[1] ?? ''),
      firstSlot: Number(f[8].split('-')[0]),
    }));
  /** @type {RedisCluster['masterOf']} */
  const masterOf = (slot, dead) => {
    const asked = nodes.find((n) => n !== dead);
    const fields = asked && slotMaster(redisCli(asked.port, 'cluster', 'nodes'), slot);
    return fields && nodeAt(fields[1]);
  };
  return { nodes, shards, masterOf, stop };
}
