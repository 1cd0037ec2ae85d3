// eventStream with Chromium's own EventSource: events arrive, and after maxStreamMs the browser comes back,
// after retry:, with Last-Event-ID.
import http from 'node:http';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startBrowser } from '../../../ws/test/helpers/browser.js';
import { eventStream, type EventStream } from '../../src/index.js';
import { loopback } from '../helpers/loopback.js';

const net = loopback();
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const PAGE = '<!doctype html><title>tickwheel event stream test</title>';

describe('eventStream with headless Chromium', () => {
  it('delivers events to EventSource, which reconnects after maxStreamMs with Last-Event-ID', async () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    cleanups.push(() => wheel.close());
    const streams: EventStream[] = [];
    const server = http.createServer((req, res) => {
      if (req.url !== '/events') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
        return;
      }
      const stream = eventStream(req, res, { wheel, maxStreamMs: 60_000, retryMs: 100 });
      const n = Number(stream.lastEventId ?? 0);
      stream.send(`event ${n + 1}`, { id: String(n + 1) });
      streams.push(stream);
    });
    const port = await net.listen(server);
    const browser = await startBrowser();
    cleanups.push(browser.close);
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.evaluate(() => {
      const got: string[] = [];
      (globalThis as unknown as { got: string[] }).got = got;
      // The page's own EventSource (Node's types do not declare it).
      const { EventSource } = globalThis as unknown as {
        EventSource: new (url: string) => { onmessage: (event: { data: string; lastEventId: string }) => void };
      };
      const source = new EventSource('/events');
      source.onmessage = (event) => got.push(`${event.data} #${event.lastEventId}`);
    });
    const got = (n: number) =>
      page.waitForFunction((count) => (globalThis as unknown as { got: string[] }).got.length >= count, n, {
        timeout: 10_000,
      });
    await got(1);
    clock.advance(60_000);
    await expect(streams[0].ended).resolves.toEqual({ reason: 'max-age' });
    await got(2);
    expect(streams[1].lastEventId).toBe('1');
    expect(await page.evaluate(() => (globalThis as unknown as { got: string[] }).got)).toEqual([
      'event 1 #1',
      'event 2 #2',
    ]);
  }, 60_000);
});
