import { describeError, differential, digest, drain, outcome } from './harness.js';

/*
 * Event streams (SSE, NDJSON) read through the wrapper with firstEventMs and eventIdleMs set far
 * too long to fire (the harness's limits): the caller gets the same bytes, in the same chunk
 * types, and the same response as from bare fetch; the scanner only reads them.
 */
differential('transparency: event streams', (same) => {
  for (const path of ['/sse', '/ndjson', '/sse-gzip']) {
    same(`${path}: read chunk by chunk, the same text and chunk types`, async (c) => {
      const res = await c.fetch(c.base + path);
      return { status: res.status, type: res.headers.get('content-type'), body: await drain(res.body!) };
    });

    same(`${path}: arrayBuffer(), the same bytes`, async (c) => {
      const res = await c.fetch(c.base + path);
      return digest(await res.arrayBuffer());
    });
  }

  same('/sse: cancelled by the caller after the first chunk, as bare', async (c) => {
    const res = await c.fetch(`${c.base}/sse`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    await reader.cancel(new Error('enough'));
    return { first: first.done, next: await outcome(reader.read()), bodyUsed: res.bodyUsed };
  });

  same('/sse: aborted by the caller mid-stream, as bare', async (c) => {
    const controller = new AbortController();
    const res = await c.fetch(`${c.base}/sse`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort(new Error('stop'));
    let error: unknown;
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch (caught) {
      error = caught;
    }
    return describeError(error);
  });
});
