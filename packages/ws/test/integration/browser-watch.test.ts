import path from 'node:path';
import { build } from 'rolldown';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocketServer, WebSocket as ServerSocket } from 'ws';
import { heartbeat } from '../../src/heartbeat.js';
import { startBrowser } from '../helpers/browser.js';
import { PartitionProxy } from '../helpers/partition-proxy.js';
import { closeAll, next, onCleanup, sleep, startNoServer } from '../helpers/servers.js';

// @tickwheel/ws/browser in headless Chromium, against a ws server with keepaliveMs: a live server
// is never declared dead (the page hidden, its main thread blocked past silenceMs, shown again), a
// server behind a stalled network path is, in bounded time. Headless Chromium keeps every page
// visible (minimising the window, other tabs and CDP's Page.setWebLifecycleState change nothing
// there), so the page's visibility is set by overriding document.visibilityState and dispatching
// visibilitychange; the late timers are real: the page's main thread is blocked, as a frozen tab's is.
// (Chromium then delivers the queued keepalives before the overdue timer: a hand-written timer
// restarted by each message survives the block too. The order that fools it, a timer first, is
// covered by the unit tests' fake page; here the late check is seen in when the dead server is found.)
// A page is also frozen the way DevTools freezes one: CDP's Debugger.pause stops the page's
// JavaScript at the next statement it runs (a keepalive's handler, the watch's timer), and nothing
// else runs until Debugger.resume: timers come due and wait, messages queue, as in a frozen tab.
// Page.setWebLifecycleState({ state: 'frozen' }) is sent too, but headless Chromium 156 returns
// success and keeps running the page (a 50 ms interval kept ticking through a 1 s "freeze", with
// or without playwright's --disable-renderer-backgrounding), so the pause is what freezes it here.

const KEEPALIVE_MS = 100;
const SILENCE_MS = 500;
/** The browser entry as a page loads it: one ES module, bundled from src/browser by rolldown. */
let watchModule = '';
/** One headless Chromium for the file; each test opens a page of its own. */
let browser: Awaited<ReturnType<typeof startBrowser>>;

const PAGE = `<!doctype html><title>tickwheel watch test</title>
<script type="module">
import { watch } from '/watch.js';
const state = { dead: [], keepalives: 0, messages: 0, visibility: 'visible' };
Object.defineProperty(document, 'visibilityState', { get: () => state.visibility, configurable: true });
globalThis.testState = state;
globalThis.setVisibility = (visibility) => {
  state.visibility = visibility;
  document.dispatchEvent(new Event('visibilitychange'));
};
globalThis.block = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
globalThis.openWatched = (url, silenceMs) =>
  new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    globalThis.testSocket = socket;
    state.keysBefore = Reflect.ownKeys(socket).length;
    const watcher = watch(socket, { silenceMs });
    globalThis.watcher = watcher;
    watcher.addEventListener('dead', (event) => state.dead.push({ at: performance.now(), silentMs: event.silentMs, readyState: socket.readyState }));
    socket.addEventListener('message', (event) => {
      if (watcher.isKeepalive(event)) state.keepalives++;
      else state.messages++;
    });
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });
</script>`;

interface PageState {
  dead: Array<{ at: number; silentMs: number; readyState: number }>;
  keepalives: number;
  messages: number;
  keysBefore: number;
}

/** An HTTP server on 127.0.0.1 serving the page and the module, and routing upgrades to a ws server with keepalives. */
async function startPageServer(): Promise<{ wss: WebSocketServer; port: number }> {
  const { wss, port } = await startNoServer((req, res) => {
    if (req.url === '/watch.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(watchModule);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  const beat = heartbeat(wss, { keepaliveMs: KEEPALIVE_MS });
  onCleanup(() => beat.stop());
  return { wss, port };
}

/** A fresh page of the file's Chromium, loaded from `port`, with a socket to `wsPort` watched for SILENCE_MS. */
async function openPage(port: number, wsPort: number): Promise<Page> {
  const page = await browser.browser.newPage();
  onCleanup(() => page.close());
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => 'openWatched' in globalThis);
  await page.evaluate(
    ([url, silenceMs]) =>
      (globalThis as unknown as { openWatched: (u: string, s: number) => Promise<void> }).openWatched(url, silenceMs),
    [`ws://127.0.0.1:${wsPort}/`, SILENCE_MS] as const,
  );
  return page;
}

const pageState = (page: Page): Promise<PageState> =>
  page.evaluate(() => (globalThis as unknown as { testState: PageState }).testState);
const setVisibility = (page: Page, visibility: 'visible' | 'hidden'): Promise<void> =>
  page.evaluate((v) => (globalThis as unknown as { setVisibility: (v: string) => void }).setVisibility(v), visibility);
/**
 * Blocks the page's main thread for `ms`: its timers come due meanwhile and run late, messages queue
 * behind. Resolves with the page's clock as the block ended, before anything queued behind it ran.
 */
const blockPage = (page: Page, ms: number): Promise<number> =>
  page.evaluate((m) => {
    (globalThis as unknown as { block: (m: number) => void }).block(m);
    return performance.now();
  }, ms);
const pageNow = (page: Page): Promise<number> => page.evaluate(() => performance.now());
/**
 * Freezes the page's JavaScript for `ms` through CDP (see the file comment), hidden meanwhile, and
 * shows it again. `whileFrozen` runs once the page is paused. Resolves with the page's clock
 * right after the resume.
 */
async function freezePage(page: Page, ms: number, whileFrozen: () => void = () => undefined): Promise<number> {
  await setVisibility(page, 'hidden');
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Debugger.enable');
    const paused = new Promise<void>((resolve) => cdp.once('Debugger.paused', () => resolve()));
    await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
    await cdp.send('Debugger.pause');
    // It pauses at the next statement the page runs: a keepalive arrives every KEEPALIVE_MS, and the
    // watch's own timer runs within silenceMs even when nothing arrives.
    await paused;
    whileFrozen();
    await sleep(ms);
    await cdp.send('Debugger.resume');
    await cdp.send('Page.setWebLifecycleState', { state: 'active' });
    await cdp.send('Debugger.disable');
  } finally {
    await cdp.detach();
  }
  const resumedAt = await pageNow(page);
  await setVisibility(page, 'visible');
  return resumedAt;
}
const readyState = (page: Page): Promise<number> =>
  page.evaluate(() => (globalThis as unknown as { testSocket: WebSocket }).testSocket.readyState);

beforeAll(async () => {
  const result = await build({
    input: path.resolve(import.meta.dirname, '../../src/browser/index.ts'),
    platform: 'browser',
    write: false,
    output: { format: 'esm' },
    logLevel: 'warn',
  });
  watchModule = result.output[0].code;
  browser = await startBrowser();
}, 90_000);

afterAll(() => browser.close());
afterEach(closeAll);

describe('watch() in headless Chromium, against heartbeat(wss, { keepaliveMs })', () => {
  it('never declares a live server dead: hidden, its main thread blocked well past silenceMs, then shown', async () => {
    const { port } = await startPageServer();
    const page = await openPage(port, port);
    await sleep(4 * SILENCE_MS);
    expect((await pageState(page)).keepalives).toBeGreaterThanOrEqual(5);

    for (let round = 0; round < 3; round++) {
      await setVisibility(page, 'hidden');
      // The watch's timer comes due during the block and runs late, with keepalives queued behind it.
      await blockPage(page, 5 * SILENCE_MS);
      await sleep(SILENCE_MS);
      await setVisibility(page, 'visible');
      await sleep(2 * SILENCE_MS);
    }
    const state = await pageState(page);
    expect(state.dead).toEqual([]);
    expect(await readyState(page)).toBe(1);
    expect(state.messages).toBe(0);
  }, 90_000);

  it('declares a server behind a stalled path dead within silenceMs and one LATE_MS, and closes the socket', async () => {
    const { port } = await startPageServer();
    const { proxy, port: proxyPort } = await PartitionProxy.start(port);
    onCleanup(() => proxy.close());
    const page = await openPage(port, proxyPort);
    await sleep(3 * SILENCE_MS);
    expect((await pageState(page)).dead).toEqual([]);

    const stalledAt = await pageNow(page);
    proxy.stall();
    await page.waitForFunction(() => (globalThis as unknown as { testState: PageState }).testState.dead.length > 0, {
      timeout: 10_000,
    });
    const [dead] = (await pageState(page)).dead;
    expect(dead.silentMs).toBeGreaterThanOrEqual(SILENCE_MS);
    // The last keepalive came at most KEEPALIVE_MS before the stall; a busy machine adds a little.
    expect(dead.at - stalledAt).toBeGreaterThanOrEqual(SILENCE_MS - KEEPALIVE_MS - 20);
    expect(dead.at - stalledAt).toBeLessThan(SILENCE_MS + 1_000);
    // close() was called: CLOSING until the closing handshake, which the stalled path never completes.
    expect(dead.readyState).toBe(2);
  }, 90_000);

  it('declares it dead after the page is shown again, with the silence it heard awake, when it died while the page slept', async () => {
    const { port } = await startPageServer();
    const { proxy, port: proxyPort } = await PartitionProxy.start(port);
    onCleanup(() => proxy.close());
    const page = await openPage(port, proxyPort);
    await sleep(2 * SILENCE_MS);

    await setVisibility(page, 'hidden');
    proxy.stall();
    const blockEndedAt = await blockPage(page, 5 * SILENCE_MS);
    expect((await pageState(page)).dead).toEqual([]);
    const shownAt = await pageNow(page);
    await setVisibility(page, 'visible');
    await page.waitForFunction(() => (globalThis as unknown as { testState: PageState }).testState.dead.length > 0, {
      timeout: 10_000,
    });
    const [dead] = (await pageState(page)).dead;
    // Its late timer ran as the block ended, and the page was shown soon after: neither may count the
    // sleep as silence, so it waits out, from the end of the block, the silence it did not hear. (Counted
    // from shownAt instead, a loaded machine's gap between the block's end and the show eats the margin.)
    expect(dead.at - blockEndedAt).toBeGreaterThanOrEqual(SILENCE_MS - 20);
    expect(dead.at - shownAt).toBeLessThan(1_000 + SILENCE_MS + 1_000);
  }, 90_000);

  it('never declares a live server dead: hidden and frozen by CDP (Debugger.pause) well past silenceMs, then resumed', async () => {
    const { port } = await startPageServer();
    const page = await openPage(port, port);
    await sleep(2 * SILENCE_MS);
    for (let round = 0; round < 2; round++) {
      const before = (await pageState(page)).keepalives;
      await freezePage(page, 5 * SILENCE_MS);
      await sleep(2 * SILENCE_MS);
      // Frozen for real: the keepalives sent meanwhile were delivered only after the resume, and
      // keepalives flow again.
      expect((await pageState(page)).keepalives).toBeGreaterThan(before);
    }
    const state = await pageState(page);
    expect(state.dead).toEqual([]);
    expect(await readyState(page)).toBe(1);
  }, 90_000);

  it('declares a server that stalled while the page was frozen dead after the resume, not before it hears silenceMs awake', async () => {
    const { port } = await startPageServer();
    const { proxy, port: proxyPort } = await PartitionProxy.start(port);
    onCleanup(() => proxy.close());
    const page = await openPage(port, proxyPort);
    await sleep(2 * SILENCE_MS);
    const frozenAfter = await pageNow(page);
    const resumedAt = await freezePage(page, 5 * SILENCE_MS, () => proxy.stall());
    await page.waitForFunction(() => (globalThis as unknown as { testState: PageState }).testState.dead.length > 0, {
      timeout: 10_000,
    });
    const [dead] = (await pageState(page)).dead;
    // Nothing ran while frozen, and the freeze is not silence it heard: it waits out silenceMs awake
    // after the resume (a watch timing silence from the last message would have called it dead at
    // once), then finds the dead server within one more LATE_MS and a loaded machine's margin.
    expect(dead.at - frozenAfter).toBeGreaterThanOrEqual(5 * SILENCE_MS + SILENCE_MS - 20);
    expect(dead.at - resumedAt).toBeLessThan(SILENCE_MS + 1_000 + 1_000);
    expect(dead.silentMs).toBeGreaterThanOrEqual(SILENCE_MS);
    expect(dead.readyState).toBe(2);
  }, 90_000);

  it("adds no own property to the browser's WebSocket, and removes its listeners once the socket closes", async () => {
    const { wss, port } = await startPageServer();
    const connected = next<ServerSocket>(wss, 'connection');
    const page = await openPage(port, port);
    const server = await connected;
    const cdp = await page.context().newCDPSession(page);
    const listenerTypes = async (): Promise<string[]> => {
      const { result } = (await cdp.send('Runtime.evaluate', { expression: 'globalThis.testSocket' })) as {
        result: { objectId: string };
      };
      const { listeners } = (await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId })) as {
        listeners: Array<{ type: string }>;
      };
      return listeners.map((l) => l.type).sort();
    };
    // The page's own: 'message', 'open', 'error'; the watch's: 'message', 'close'.
    expect(await listenerTypes()).toEqual(['close', 'error', 'message', 'message', 'open']);
    const keys = await page.evaluate(() => {
      const g = globalThis as unknown as { testSocket: WebSocket; testState: PageState };
      return [Reflect.ownKeys(g.testSocket).length, g.testState.keysBefore];
    });
    expect(keys[0]).toBe(keys[1]);

    server.close(1000, 'bye');
    await page.waitForFunction(() => (globalThis as unknown as { testSocket: WebSocket }).testSocket.readyState === 3);
    expect(await listenerTypes()).toEqual(['error', 'message', 'open']);
    expect(
      await page.evaluate(() => (globalThis as unknown as { watcher: { isStopped: boolean } }).watcher.isStopped),
    ).toBe(true);
    expect((await pageState(page)).dead).toEqual([]);
  }, 90_000);
});
