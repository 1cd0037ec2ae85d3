import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeResponse, differential, digest, drain, outcome } from './harness.js';
import { BIG_BYTES } from './server.js';

let refusing: Promise<number> | undefined;

/** A port on 127.0.0.1 where nothing listens, the same one for both runs of a scenario. */
function closedPort(): Promise<number> {
  refusing ??= findClosedPort();
  return refusing;
}

async function findClosedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

differential('transparency: transport', (same) => {
  for (const status of [301, 302, 303, 307, 308]) {
    same(
      `node-fetch test/main.js "should follow redirect code ${status}" (WPT fetch/api/redirect/redirect-method.any.js): POST through a ${status}`,
      async (c) => {
        const res = await c.fetch(`${c.base}/redirect?status=${status}&to=/echo`, {
          method: 'POST',
          body: 'payload',
          headers: { 'content-type': 'text/plain' },
        });
        const last = c.server.last;
        return {
          res: describeResponse(res, c),
          text: await res.text(),
          server: { method: last.method, body: last.body, type: last.headers['content-type'] ?? null },
        };
      },
    );
  }

  same('WPT fetch/api/redirect/redirect-mode.any.js: redirect "manual" and "error"', async (c) => {
    const manual = await c.fetch(`${c.base}/redirect?status=302&to=/echo`, { redirect: 'manual' });
    return {
      manual: describeResponse(manual, c),
      text: await manual.text(),
      error: await outcome(c.fetch(`${c.base}/redirect?status=302&to=/echo`, { redirect: 'error' })),
    };
  });

  same('undici test/fetch/redirect.js: a redirect chain and a redirect loop', async (c) => {
    const chain = await c.fetch(
      `${c.base}/redirect?status=301&to=${encodeURIComponent('/redirect?status=302&to=/text')}`,
    );
    return {
      chain: describeResponse(chain, c),
      text: await chain.text(),
      loop: await outcome(c.fetch(`${c.base}/loop`)),
    };
  });

  same(
    'node-fetch test/main.js "should handle no content response" and HEAD (WPT fetch/api/basic/request-head.any.js): HEAD, 204, 304',
    async (c) => {
      const log: unknown[] = [];
      for (const [url, init] of [
        [`${c.base}/echo`, { method: 'HEAD' }],
        [`${c.base}/status?code=204`, {}],
        [`${c.base}/status?code=304`, {}],
      ] as const) {
        const res = await c.fetch(url, init);
        log.push(describeResponse(res, c), await outcome(res.text()), await outcome(res.arrayBuffer()));
      }
      return log;
    },
  );

  same('node-fetch test/main.js: 4xx and 5xx responses resolve with their body', async (c) => {
    const log: unknown[] = [];
    for (const code of [404, 500]) {
      const res = await c.fetch(`${c.base}/status?code=${code}`);
      log.push(describeResponse(res, c), await res.text());
    }
    return log;
  });

  for (const coding of ['gzip', 'deflate', 'br']) {
    same(
      `node-fetch test/main.js "should decompress ${coding} response" (undici test/fetch/encoding.js)`,
      async (c) => {
        const res = await c.fetch(`${c.base}/compressed?coding=${coding}`);
        return { res: describeResponse(res, c), text: await res.text() };
      },
    );
  }

  same('undici test/fetch/encoding.js: a compressed body read as a stream', async (c) => {
    const res = await c.fetch(`${c.base}/compressed?coding=gzip`);
    return drain(res.body!);
  });

  same(
    'undici test/fetch/client-fetch.js (large bodies): a 50 MB body, arrayBuffer() and a streamed read',
    async (c) => {
      const whole = digest(await (await c.fetch(`${c.base}/big`)).arrayBuffer());
      const res = await c.fetch(`${c.base}/big`);
      const reader = res.body!.getReader();
      let bytes = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
      }
      return { whole, streamed: bytes, expected: BIG_BYTES };
    },
    60_000,
  );

  same(
    'undici test/fetch/client-fetch.js: a 50 MB body cloned, read through both branches',
    async (c) => {
      const res = await c.fetch(`${c.base}/big`);
      const copy = res.clone();
      const [a, b] = await Promise.all([res.arrayBuffer(), copy.arrayBuffer()]);
      return [digest(a), digest(b)];
    },
    60_000,
  );

  same('node-fetch test/main.js "should reject with error on network failure": connection refused', async (c) => {
    const port = await closedPort();
    return outcome(c.fetch(`http://127.0.0.1:${port}/`));
  });

  same('undici test/fetch/client-error-stack-trace.js: a connection reset before the headers', async (c) =>
    outcome(c.fetch(`${c.base}/reset-before-headers`)),
  );

  same('node-fetch test/main.js "should handle network-error in the middle of a body": a reset mid-body', async (c) => {
    const res = await c.fetch(`${c.base}/reset-after-headers`);
    return { res: describeResponse(res, c), text: await outcome(res.text()), after: describeResponse(res, c) };
  });

  same('node-fetch test/main.js: a reset mid-body seen by a stream reader', async (c) => {
    const res = await c.fetch(`${c.base}/reset-after-headers`);
    return outcome(drain(res.body!));
  });
});
