/**
 * A deliberately slow HTTP server on 127.0.0.1, one route per way a server can be slow:
 *
 * - `/fast`: answers at once.
 * - `/slow-headers?ms=N`: sends nothing for N ms, then answers.
 * - `/stall-body?ms=N`: sends the headers and a first chunk at once, then nothing for N ms.
 * - `/trickle?everyMs=N&chunks=K`: sends K small chunks, one every N ms.
 * - `/flaky?key=K&fail=F`: the first F requests with this key hang for 2 s before answering; later ones answer at once.
 * - `/busy?key=K&fail=F`: the first F requests with this key get a 503 with `Retry-After: 0`; later ones a 200.
 *
 * It counts the requests each route and key received, and cancels its pending work when a client
 * goes away, so it closes promptly.
 */
import http from 'node:http';

/**
 * Starts the server on a free loopback port.
 *
 * @returns {Promise<{ url: string, hits: Map<string, number>, close(): Promise<void> }>}
 */
export async function startSlowServer() {
  const hits = new Map();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const ms = Number(url.searchParams.get('ms') ?? 0);
    const key = `${req.method} ${url.pathname}${url.searchParams.has('key') ? `?key=${url.searchParams.get('key')}` : ''}`;
    const hit = (hits.get(key) ?? 0) + 1;
    hits.set(key, hit);
    const timers = [];
    const later = (delayMs, fn) => timers.push(setTimeout(fn, delayMs));
    res.on('close', () => timers.forEach(clearTimeout));
    req.resume();

    switch (url.pathname) {
      case '/fast':
        res.end(JSON.stringify({ ok: true }));
        break;
      case '/slow-headers':
        later(ms, () => res.end('finally'));
        break;
      case '/stall-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first chunk...');
        later(ms, () => res.end('...the rest'));
        break;
      case '/trickle': {
        const everyMs = Number(url.searchParams.get('everyMs'));
        const chunks = Number(url.searchParams.get('chunks'));
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 1; i <= chunks; i++)
          later(i * everyMs, () => (i === chunks ? res.end(`chunk ${i}\n`) : res.write(`chunk ${i}\n`)));
        break;
      }
      case '/flaky':
        if (hit <= Number(url.searchParams.get('fail'))) later(2_000, () => res.end('too late'));
        else res.end(JSON.stringify({ ok: true, attempt: hit }));
        break;
      case '/busy':
        if (hit <= Number(url.searchParams.get('fail'))) res.writeHead(503, { 'retry-after': '0' }).end('busy');
        else res.end(JSON.stringify({ ok: true, attempt: hit }));
        break;
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
