import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startPageServer } from '../src/page-server.mjs';

let server;
afterEach(() => server?.close());

describe('startPageServer', () => {
  it('serves the page, and the browser entry as the ES modules the package ships', async () => {
    server = await startPageServer({ keepaliveMs: 100 });
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("import { watch } from '/tickwheel/index.js'");
    const entry = await fetch(new URL('/tickwheel/index.js', server.url));
    expect(entry.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await entry.text()).toMatch(/export \{ watch, SilenceWatch, DeadEvent \} from '\.\/silence-watch\.js'/);
    const watchModule = await (await fetch(new URL('/tickwheel/silence-watch.js', server.url))).text();
    expect(watchModule).not.toMatch(/require\(|node:/);
    expect((await fetch(new URL('/tickwheel/../../package.json', server.url))).status).toBe(404);
  });

  it('sends keepalives, and nothing more once the page asks it to go silent', async () => {
    server = await startPageServer({ keepaliveMs: 100 });
    const ws = new WebSocket(server.url.replace('http', 'ws'));
    const messages = [];
    ws.on('message', (data) => messages.push(String(data)));
    await new Promise((resolve) => ws.once('open', resolve));
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(messages.length).toBeGreaterThanOrEqual(3);
    expect(messages.every((m) => m === '')).toBe(true);
    ws.send('go silent');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = messages.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(messages.length).toBe(before);
    ws.terminate();
  });
});
