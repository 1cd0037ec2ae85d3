import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocketServer, WebSocket as ServerSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import type { DeadPeerEvent } from '../../src/types.js';
import { startBrowser } from '../helpers/browser.js';
import { PartitionProxy } from '../helpers/partition-proxy.js';
import { closeAll, next, onCleanup, waitFor, startNoServer } from '../helpers/servers.js';

const PAGE = '<!doctype html><title>tickwheel ws test</title>';
// Long enough for a loaded CI machine: a Chromium pong that took over 100 ms at load 7 got the
// live browser declared dead, and the rounds below were then never counted.
const PING_INTERVAL_MS = 500;
const PONG_TIMEOUT_MS = 500;

/** An HTTP server on 127.0.0.1 serving a blank page and routing upgrades to a ws server. */
async function startPageServer(): Promise<{ wss: WebSocketServer; port: number }> {
  const { wss, port } = await startNoServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
  );
  return { wss, port };
}

/** Waits for `rounds` pings to `socket`, failing at once if the live browser is declared dead. */
function heartbeatRounds(beat: ReturnType<typeof heartbeat>, socket: ServerSocket, rounds: number): Promise<void> {
  return waitFor(
    () => {
      if (beat.stats().dead > 0)
        throw new Error(`the live browser was declared dead before ${rounds} heartbeat rounds`);
      return (beat.state(socket)?.pingsSent ?? 0) >= rounds;
    },
    10_000,
    `${rounds} heartbeat rounds`,
  );
}

afterEach(closeAll);

describe('heartbeat with a headless Chromium client', () => {
  it('keeps the browser alive through several rounds and reports it dead soon after its process is killed', async () => {
    const { wss, port } = await startPageServer();
    const { proxy, port: proxyPort } = await PartitionProxy.start(port);
    onCleanup(() => proxy.close());
    const beat = heartbeat(wss, { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS });
    onCleanup(() => beat.stop());
    const browser = await startBrowser();
    onCleanup(browser.close);

    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    const connected = next<ServerSocket>(wss, 'connection');
    await page.evaluate(async (url) => {
      const ws = new WebSocket(url);
      (globalThis as unknown as { testSocket: WebSocket }).testSocket = ws;
      await new Promise((resolve, reject) => {
        ws.onopen = resolve;
        ws.onerror = reject;
      });
    }, `ws://127.0.0.1:${proxyPort}/`);
    const socket = await connected;

    // The browser answers the pings itself; nothing in the page does.
    await heartbeatRounds(beat, socket, 4);
    const alive = beat.state(socket)!;
    expect(alive.rttMs).toBeGreaterThanOrEqual(0);
    expect(beat.stats().dead).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { testSocket: WebSocket }).testSocket.readyState)).toBe(
      1,
    );

    // The browser's host vanishes: its network path goes dead and its process is killed.
    const dead = next<DeadPeerEvent>(beat, 'dead');
    const killedAt = performance.now();
    proxy.partition();
    process.kill(browser.pid, 'SIGKILL');
    const event = await dead;
    const detectedAfterMs = performance.now() - killedAt;
    expect(event.socket).toBe(socket);
    expect(event.waitedMs).toBeGreaterThanOrEqual(PONG_TIMEOUT_MS);
    // At most one quiet interval before the ping, then the pong timeout, plus slack for a busy machine.
    expect(detectedAfterMs).toBeLessThan(PING_INTERVAL_MS + PONG_TIMEOUT_MS + 1_000);
    expect(beat.size).toBe(0);
  }, 90_000);

  it('forgets a killed browser as soon as its connection closes', async () => {
    const { wss, port } = await startPageServer();
    const beat = heartbeat(wss, { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS });
    onCleanup(() => beat.stop());
    const browser = await startBrowser();
    onCleanup(browser.close);
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    const connected = next<ServerSocket>(wss, 'connection');
    await page.evaluate((url) => {
      (globalThis as unknown as { testSocket: WebSocket }).testSocket = new WebSocket(url);
    }, `ws://127.0.0.1:${port}/`);
    const socket = await connected;
    await heartbeatRounds(beat, socket, 2);

    // Chromium's renderer outlives the killed browser process for a moment and closes with 1001.
    const closed = next<number>(socket, 'close');
    process.kill(browser.pid, 'SIGKILL');
    expect([1001, 1006]).toContain(await closed);
    expect(beat.state(socket)).toBeUndefined();
    expect(beat.size).toBe(0);
    expect(beat.stats().dead).toBe(0);
  }, 90_000);
});
