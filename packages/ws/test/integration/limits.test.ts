import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocketServer, WebSocket } from 'ws';
import { heartbeat, type HeartbeatController } from '../../src/heartbeat.js';
import type { HeartbeatOptions, LimitEvent } from '../../src/types.js';
import { startBrowser } from '../helpers/browser.js';
import { closeAll, connect, next, onCleanup, startServer, startNoServer } from '../helpers/servers.js';

/** Slack for a shared, noisy 2-core machine. */
const SLACK_MS = 300;

afterEach(closeAll);

/** A server with a heartbeat of `options` (pings off unless given), its 'limit' events collected. */
async function limitedServer(
  options: HeartbeatOptions,
): Promise<{ wss: WebSocketServer; url: string; beat: HeartbeatController; limits: LimitEvent[] }> {
  const { wss, url } = await startServer();
  const beat = heartbeat(wss, { pingIntervalMs: 0, ...options });
  onCleanup(() => beat.stop());
  const limits: LimitEvent[] = [];
  beat.on('limit', (e) => limits.push(e));
  return { wss, url, beat, limits };
}

/** The code and reason of `ws`'s `'close'`. */
function closeOf(ws: WebSocket): Promise<[number, string]> {
  return new Promise((resolve) =>
    ws.once('close', (code: number, reason: Buffer) => resolve([code, reason.toString()])),
  );
}

describe('connection limits with a ws client', () => {
  it('closes with 1008 a client that sends nothing within firstMessageMs, and leaves one that did', async () => {
    const { url, limits, beat } = await limitedServer({ firstMessageMs: 150 });
    const openedAt = performance.now();
    const silent = await connect(url);
    const talker = await connect(url);
    talker.send('auth');
    const [code, reason] = await closeOf(silent);
    expect(performance.now() - openedAt).toBeGreaterThanOrEqual(150);
    expect([code, reason]).toEqual([1008, 'no message in time']);
    expect(limits.map((e) => e.kind)).toEqual(['firstMessage']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(talker.readyState).toBe(talker.OPEN);
    expect(beat.size).toBe(1);
  });

  it('closes each client with 1001 within [max × (1 − jitter), max] after it opened', async () => {
    const { url, limits } = await limitedServer({ maxLifetimeMs: 400, lifetimeJitter: 0.5 });
    // Each server side is attached after `startedAt` and before `openedAt`.
    const startedAt = performance.now();
    const clients = await Promise.all(Array.from({ length: 8 }, () => connect(url)));
    const openedAt = performance.now();
    const closes = await Promise.all(clients.map(async (c) => [await closeOf(c), performance.now()] as const));
    for (const [[code, reason], closedAt] of closes) {
      expect([code, reason]).toEqual([1001, 'connection lifetime reached']);
      expect(closedAt - startedAt).toBeGreaterThanOrEqual(200);
      expect(closedAt - openedAt).toBeLessThanOrEqual(400 + SLACK_MS);
    }
    expect(limits).toHaveLength(8);
    expect(limits.every((e) => e.kind === 'lifetime')).toBe(true);
  });

  it('terminates a client that stopped reading while the server keeps writing', async () => {
    const { wss, url, beat } = await limitedServer({ maxBufferedBytes: 1 << 20, drainTimeoutMs: 100 });
    const reached = next<LimitEvent>(beat, 'limit');
    const accepted = next<WebSocket>(wss, 'connection');
    const client = await connect(url);
    const server = await accepted;
    client.pause();
    const chunk = Buffer.alloc(64 * 1024, 1);
    const flood = setInterval(() => {
      if (server.readyState === server.OPEN && server.bufferedAmount < 16 << 20) server.send(chunk);
    }, 2);
    onCleanup(() => clearInterval(flood));
    const limit = await reached;
    expect(limit.kind).toBe('slowConsumer');
    expect(limit.socket).toBe(server);
    await next(server, 'close');
  });
});

/** Debian's interpreter: python3-websockets is installed for it. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(__dirname, '..', 'fixtures', 'stalled-client.py');

/** Runs the Python websockets client (see the fixture), killed by pid on cleanup. */
function runPython(url: string, mode: 'pause' | 'no-recv', seconds: number): void {
  const child = spawn(PYTHON, [SCRIPT, url, mode, String(seconds)], { stdio: ['ignore', 'ignore', 'inherit'] });
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = next(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  });
}

describe('connection limits with a Python websockets client', () => {
  it('closes with 1008 a client that sends no message within firstMessageMs', async () => {
    const { wss, url, limits } = await limitedServer({ firstMessageMs: 200 });
    const accepted = next<WebSocket>(wss, 'connection');
    runPython(url, 'pause', 60);
    const server = await accepted;
    const [code] = await closeOf(server);
    expect(code).toBe(1008);
    expect(limits.map((e) => [e.kind, e.socket === server])).toEqual([['firstMessage', true]]);
  }, 30_000);

  it('closes a client with 1001 at the end of its lifetime', async () => {
    const { wss, url, limits } = await limitedServer({ maxLifetimeMs: 300 });
    const accepted = next<WebSocket>(wss, 'connection');
    runPython(url, 'pause', 60);
    const server = await accepted;
    const [code] = await closeOf(server);
    expect(code).toBe(1001);
    expect(limits.map((e) => e.kind)).toEqual(['lifetime']);
  }, 30_000);

  it('terminates a client that never consumes what the server sends', async () => {
    const { wss, url, limits } = await limitedServer({ maxBufferedBytes: 1 << 20, drainTimeoutMs: 100 });
    const accepted = next<WebSocket>(wss, 'connection');
    runPython(url, 'no-recv', 0);
    const server = await accepted;
    const chunk = Buffer.alloc(64 * 1024, 1);
    const flood = setInterval(() => {
      if (server.readyState === server.OPEN && server.bufferedAmount < 16 << 20) server.send(chunk);
    }, 2);
    onCleanup(() => clearInterval(flood));
    await next(server, 'close');
    expect(limits.map((e) => e.kind)).toEqual(['slowConsumer']);
  }, 30_000);
});

describe('connection limits with a headless Chromium client', () => {
  it('closes a page that sends nothing with 1008, and one past its lifetime with 1001', async () => {
    const { wss, port } = await startNoServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html>'),
    );
    const beat = heartbeat(wss, { pingIntervalMs: 0, firstMessageMs: 300, maxLifetimeMs: 900 });
    onCleanup(() => beat.stop());
    const browser = await startBrowser();
    onCleanup(browser.close);
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    const codes = await page.evaluate(async (url) => {
      const closeCode = (send: boolean) =>
        new Promise<number>((resolve) => {
          const ws = new globalThis.WebSocket(url);
          if (send) ws.onopen = () => ws.send('hello');
          ws.onclose = (e) => resolve(e.code);
        });
      return Promise.all([closeCode(false), closeCode(true)]);
    }, `ws://127.0.0.1:${port}/`);
    expect(codes).toEqual([1008, 1001]);
    expect(beat.stats().limits).toBe(2);
  }, 90_000);
});
