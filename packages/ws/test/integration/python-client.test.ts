import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { DeadPeerEvent } from '../../src/types.js';
import { closeAll, next, onCleanup, startServer } from '../helpers/servers.js';

/** Debian's interpreter: python3-websockets is installed for it, not for any other python3 on PATH. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(__dirname, '..', 'fixtures', 'stalled-client.py');
const SLACK_MS = 150;

/** Runs the Python client; resolves once it printed `line`. */
function runClient(
  url: string,
  mode: 'pause' | 'no-recv',
  seconds: number,
): { child: ChildProcess; printed: (line: string) => Promise<number> } {
  const child = spawn(PYTHON, [SCRIPT, url, mode, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = next(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
  let output = '';
  const waiters: Array<{ line: string; resolve: (at: number) => void }> = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (const w of [...waiters]) {
      if (output.split('\n').includes(w.line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(performance.now());
      }
    }
  });
  return {
    child,
    printed: (line) =>
      new Promise<number>((resolve, reject) => {
        waiters.push({ line, resolve });
        child.once('exit', (code) => reject(new Error(`python client exited (${code}) before printing ${line}`)));
      }),
  };
}

afterEach(closeAll);

describe('heartbeat with a Python websockets client', () => {
  it('detects a client that answered pings, then stopped reading', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 80, pongTimeoutMs: 60 });
    onCleanup(() => beat.stop());
    const connected = next<WebSocket>(wss, 'connection');
    const client = runClient(url, 'pause', 0.6);
    const socket = await connected;
    const stalled = client.printed('stalled');
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    const stalledAt = await stalled;
    expect(dead.socket).toBe(socket);
    // It answered while it read: several pings went out, the last answered one has a round trip.
    expect(dead.state.pingsSent).toBeGreaterThanOrEqual(3);
    expect(dead.state.rttMs).toBeGreaterThanOrEqual(0);
    expect(dead.waitedMs).toBeGreaterThanOrEqual(60);
    expect(dead.waitedMs).toBeLessThanOrEqual(60 + 1 + SLACK_MS);
    expect(performance.now() - stalledAt).toBeLessThan(80 + 60 + 1_000);
  }, 30_000);

  it('detects a client that never consumes the messages sent to it', async () => {
    const { wss, url } = await startServer();
    const beat = heartbeat(wss, { pingIntervalMs: 100, pongTimeoutMs: 100 });
    onCleanup(() => beat.stop());
    const connected = next<WebSocket>(wss, 'connection');
    runClient(url, 'no-recv', 0);
    const socket = await connected;
    // Keep the server writing: writes are not reads, so they never keep a silent peer alive.
    const chunk = Buffer.alloc(64 * 1024, 1);
    const flood = setInterval(() => {
      if (socket.bufferedAmount < 8 * 1024 * 1024) socket.send(chunk);
    }, 5);
    onCleanup(() => clearInterval(flood));
    const dead = await next<DeadPeerEvent>(beat, 'dead');
    expect(dead.socket).toBe(socket);
    expect(dead.waitedMs).toBeGreaterThanOrEqual(100);
    expect(dead.waitedMs).toBeLessThanOrEqual(100 + 1 + SLACK_MS);
  }, 30_000);
});
