/**
 * Where the cluster's Redis comes from: REDIS_URL when set; otherwise a private redis-server on
 * a free loopback port (in a temporary directory, no persistence), when the binary is installed.
 * ioredis-mock cannot stand in here: its data lives inside one process, and this example's
 * workers are separate processes.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

function onPath(binary) {
  return spawnSync('sh', ['-c', `command -v ${binary}`], { stdio: 'ignore' }).status === 0;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function answers(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Finds or starts a Redis for the example.
 *
 * @param {{ redisUrl?: string }} options - an existing Redis to use (default `process.env.REDIS_URL`)
 * @returns {Promise<{ url: string, source: string, stop(): Promise<void> } | { skipped: string }>}
 *   the URL and how to stop it, or why there is none
 */
export async function provideRedis({ redisUrl = process.env.REDIS_URL } = {}) {
  if (redisUrl) return { url: redisUrl, source: 'REDIS_URL', stop: async () => undefined };
  if (!onPath('redis-server')) {
    return {
      skipped:
        'no REDIS_URL and no redis-server binary (apt-get install redis-server); worker processes cannot share the in-process ioredis-mock',
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-timers-redis-'));
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.once('error', () => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await answers(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      return { skipped: `redis-server did not start on 127.0.0.1:${port}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `redis://127.0.0.1:${port}`, source: `private redis-server on 127.0.0.1:${port}`, stop };
}
